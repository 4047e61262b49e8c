import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Files another user owns are not used, and a store put in the place of
/// this path's own is refused.
@Suite(.cheapKeyDerivation) struct StoreOwnershipTests {
    /// The tests run as root here; as anyone else they cannot give a file away, and are skipped.
    static let canChown = geteuid() == 0
    static let nobody: uid_t = 65534

    func give(_ path: String, to uid: uid_t = nobody) {
        #expect(chown(path, uid, gid_t(uid)) == 0)
    }

    @Test(.enabled(if: canChown), arguments: ["database", "key file", "folder", "wal", "key folder"])
    func aFileOwnedByAnotherUserIsRefused(file: String) throws {
        let store = try TemporaryStore()
        let keyFolder = store.directory.deletingLastPathComponent().appendingPathComponent("keys", isDirectory: true)
        let keyFile = keyFolder.appendingPathComponent("store.key")
        func open() throws -> CredentialStorage {
            try CredentialStorage(at: store.databaseURL, key: .keyFile(keyFile), rollbackAnchor: .directory(store.anchorDirectory))
        }
        let first = try open()
        try first.set(Fixture.credential("alice", "secret"), for: Fixture.space())
        var keep: CredentialStorage? = first
        switch file {
        case "database": give(store.databaseURL.path)
        case "key file": give(keyFile.path)
        case "folder": give(store.directory.path)
        case "key folder": give(keyFolder.path)
        default: give(store.databaseURL.path + "-wal")  // the WAL exists while `first` is open
        }
        if file != "wal" { keep = nil }
        let error = #expect(throws: CredentialStorageError.self) { try open() }
        #expect(error?.code == .permissionsTooOpen)
        #expect(error?.message.contains("uid 65534") == true)
        #expect(error?.message.contains("secret") == false)
        withExtendedLifetime(keep) {}
    }

    @Test(.enabled(if: canChown)) func theOwnerIsNamedWhenTheUserDatabaseKnowsIt() throws {
        let store = try TemporaryStore()
        try store.open().set(Fixture.credential("alice"), for: Fixture.space())
        give(store.databaseURL.path)
        let error = #expect(throws: CredentialStorageError.self) { try store.open() }
        if let name = getpwuid(Self.nobody).map({ String(cString: $0.pointee.pw_name) }) {
            #expect(error?.message.contains("uid 65534 (\(name))") == true)
        }
    }

    @Test func rootsOwnFilesAndTheCallersAreAccepted() throws {
        let store = try TemporaryStore()
        try store.open().set(Fixture.credential("alice"), for: Fixture.space())
        #expect(try store.open().credentials(for: Fixture.space()).count == 1)
    }

    /// Moves the database and key file of `other` into `store`'s place.
    func replace(_ store: TemporaryStore, with other: TemporaryStore) throws {
        store.waitUntilClosed()
        other.waitUntilClosed()
        for (from, to) in [(other.databaseURL, store.databaseURL), (other.keyFileURL, store.keyFileURL)] {
            _ = unlink(to.path)
            if FileManager.default.fileExists(atPath: from.path) { try FileManager.default.moveItem(at: from, to: to) }
        }
    }

    @Test func anotherStoreAtTheSamePathIsTampering() throws {
        let store = try TemporaryStore()
        try store.open().set(Fixture.credential("alice", "mine"), for: Fixture.space())
        let other = try TemporaryStore()
        try other.open().set(Fixture.credential("mallory", "theirs"), for: Fixture.space())
        try replace(store, with: other)
        for check in [CredentialStorage.IntegrityCheck.onOpen, .deferredToVerify] {
            expectError(.tamperDetected) { try store.open(integrityCheck: check) }
        }
        // Replaced on purpose: forgetting the record accepts the new store, and remembers it.
        try StoreFile.forgetRecordedStore(at: store.databaseURL, rollbackAnchor: .directory(store.anchorDirectory))
        #expect(try store.open().credentials(for: Fixture.space())["mallory"] != nil)
        #expect(try store.open().credentials(for: Fixture.space())["mallory"] != nil)
    }

    @Test func aKeyFileStoreWherePassphraseStoreWasIsTampering() throws {
        let store = try TemporaryStore()
        do {
            let storage = try CredentialStorage(at: store.databaseURL, key: .passphrase("correct horse"),
                                                rollbackAnchor: .directory(store.anchorDirectory))
            try storage.set(Fixture.credential("alice", "mine"), for: Fixture.space())
        }
        let other = try TemporaryStore()
        try other.open().set(Fixture.credential("mallory", "theirs"), for: Fixture.space())
        try replace(store, with: other)
        let error = #expect(throws: CredentialStorageError.self) { try store.open() }
        #expect(error?.code == .tamperDetected)
        #expect(error?.message.contains("passphrase") == true)
    }

    /// A store deleted and created again at its path is the user's own new store: nothing was
    /// read from a file someone else made.
    @Test func aStoreCreatedWhereNoneIsIsAccepted() throws {
        let store = try TemporaryStore()
        try store.open().set(Fixture.credential("alice"), for: Fixture.space())
        store.waitUntilClosed()
        for url in [store.databaseURL, store.keyFileURL] { try FileManager.default.removeItem(at: url) }
        #expect(try store.open().credentials(for: Fixture.space()).isEmpty)
        #expect(try store.open().credentials(for: Fixture.space()).isEmpty)
    }
}
