import Foundation
import GRDB
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A whole store backed up to one file and put back, through the library: everything comes back,
/// a wrong passphrase or an altered backup changes nothing, and the restored store, or an older
/// copy accepted as it is, opens past its rollback anchor.
@Suite(.cheapKeyDerivation) struct BackupTests {
    let store: TemporaryStore
    let space = Fixture.space(realm: "Backed up")
    let synced = Fixture.space("synced.example.com")
    let passphrase = "backup passphrase"

    init() throws {
        store = try TemporaryStore()
    }

    /// alice (permanent, with details) and bob in one space, bob its default; carol synchronizable.
    private func fill(_ storage: CredentialStorage) throws {
        try storage.set(Credential(
            user: "alice", password: "pw-alice", persistence: .permanent, expires: Date(timeIntervalSince1970: 4_000_000_000),
            label: "work", comment: "the API key", attributes: ["team": "ops"]), for: space)
        try storage.set(Fixture.credential("bob", "pw-bob"), for: space)
        try storage.setDefault(user: "bob", for: space)
        try storage.set(Fixture.credential("carol", "pw-carol", .synchronizable), for: synced)
    }

    private func restore(_ backup: URL, into target: TemporaryStore, passphrase: String? = nil,
                         confirm: (RestoreReport) throws -> Void = { _ in }) throws -> RestoreReport {
        try StoreFile.restore(
            from: backup, passphrase: passphrase ?? self.passphrase, to: target.databaseURL, key: .keyFile(target.keyFileURL),
            rollbackAnchor: .directory(target.anchorDirectory), confirm: confirm)
    }

    @Test func aBackupRestoredElsewhereGivesEverythingBackWithDetailsAndDefaults() throws {
        let backup = store.file("store.backup")
        let entries: [CredentialEntry]
        do {
            let storage = try store.open()
            try fill(storage)
            entries = try storage.entries()
            try storage.maintenance.backup(to: backup, passphrase: passphrase)
        }
        let target = try TemporaryStore()
        let report = try restore(backup, into: target)
        #expect(report.replaced == .nothing)
        #expect(report.restored == entries)

        // A key file was created for the restored store, which opens past its anchor.
        let restored = try target.open()
        #expect(try restored.entries() == entries)
        #expect(try restored.defaultCredential(for: space)?.password == "pw-bob")
        let alice = try #require(try restored.credentials(for: space)["alice"])
        #expect(alice.password == "pw-alice" && alice.label == "work" && alice.comment == "the API key" && alice.attributes == ["team": "ops"])
        #expect(alice.expires == Date(timeIntervalSince1970: 4_000_000_000))
        #expect(try restored.credentials(for: synced)["carol"]?.persistence == .synchronizable)
        #expect(try restored.maintenance.verify().isSound)
        #expect(try StoreFile.protection(ofStoreAt: target.databaseURL) == .keyFile)
    }

    @Test func theBackupIsOneFileLockedByItsPassphraseWithNothingInTheClear() throws {
        let backup = store.file("store.backup")
        try fill(store.open())
        try store.open().maintenance.backup(to: backup, passphrase: passphrase)
        #expect(try FileManager.default.attributesOfItem(atPath: backup.path)[.posixPermissions] as? Int == 0o600)
        for suffix in ["-wal", "-shm", "-journal"] {
            #expect(!FileManager.default.fileExists(atPath: backup.path + suffix))
        }
        let bytes = try Data(contentsOf: backup)
        // Only strings long enough that ciphertext cannot hold them by chance.
        for secret in ["pw-alice", "pw-bob", "pw-carol", "api.example.com", "the API key"] {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is in the clear in the backup")
        }
        #expect(try StoreFile.protection(ofStoreAt: backup) == .passphrase)
        // The store's key file does not open it.
        expectError(.wrongKey) { try CredentialStorage(at: backup, key: .keyFile(store.keyFileURL), rollbackAnchor: .none) }
    }

    @Test func aWrongPassphraseIsRefusedAndTheTargetIsUntouched() throws {
        let backup = store.file("store.backup")
        try fill(store.open())
        try store.open().maintenance.backup(to: backup, passphrase: passphrase)

        let target = try TemporaryStore()
        try target.open().set(Fixture.credential("dave", "pw-dave"), for: space)
        target.waitUntilClosed()
        let before = try target.files()
        var confirmed = false
        expectError(.wrongKey, secrets: [passphrase, "not it"]) {
            try restore(backup, into: target, passphrase: "not it") { _ in confirmed = true }
        }
        #expect(!confirmed)
        #expect(try target.files() == before, "the target's files changed, or a temporary file was left beside them")
        #expect(try target.open().credentials(for: space).keys.sorted() == ["dave"])
    }

    @Test func anAlteredBackupIsRefusedAndTheTargetIsUntouched() throws {
        let backup = store.file("store.backup")
        try fill(store.open())
        try store.open().maintenance.backup(to: backup, passphrase: passphrase)
        let raw = try DatabaseQueue(path: backup.path)
        try raw.write { try $0.execute(sql: "DELETE FROM credentials WHERE user_index = (SELECT min(user_index) FROM credentials)") }
        try raw.close()

        let target = try TemporaryStore()
        try target.open().set(Fixture.credential("dave", "pw-dave"), for: space)
        target.waitUntilClosed()
        let before = try target.files()
        expectError(.tamperDetected) { try restore(backup, into: target) }
        #expect(try target.files() == before)
    }

    @Test func aRestoreSaysWhatIsOlderAndStopsWhenConfirmThrows() throws {
        let backup = store.file("store.backup")
        let deviceID: String
        do {
            let storage = try store.open()
            try fill(storage)
            deviceID = try storage.sync.deviceID
            try storage.maintenance.backup(to: backup, passphrase: passphrase)
            // Since the backup: alice changed, erin added, carol removed.
            try storage.set(Credential(user: "alice", password: "pw-alice-2"), for: space)
            try storage.set(Fixture.credential("erin", "pw-erin"), for: space)
            try storage.remove(user: "carol", for: synced, options: .removeSynchronizable)
        }
        store.waitUntilClosed()
        let before = try store.files()
        struct Declined: Error {}
        #expect(throws: Declined.self) {
            try restore(backup, into: store) { _ in throw Declined() }
        }
        store.waitUntilClosed()
        #expect(try store.files() == before)
        #expect(try store.open().credentials(for: space)["alice"]?.password == "pw-alice-2")

        let report = try restore(backup, into: store)
        #expect(report.replaced == .compared)
        #expect(report.changedSince.map(\.user) == ["alice"])
        #expect(report.addedSince.map(\.user) == ["erin"])
        #expect(report.removedSince.map(\.user) == ["carol"])
        // The older state opens past the anchor, which follows it from there.
        let restored = try store.open()
        #expect(try restored.credentials(for: space)["alice"]?.password == "pw-alice")
        #expect(try restored.credentials(for: space)["erin"] == nil)
        #expect(try restored.credentials(for: synced)["carol"]?.password == "pw-carol")
        // Restored where it was made, the store is the same device to its peers.
        #expect(try restored.sync.deviceID == deviceID)
        try restored.set(Fixture.credential("frank", "pw-frank"), for: space)
        #expect(try store.open().credentials(for: space)["frank"] != nil)
    }

    @Test func aStoreThatDoesNotOpenIsReplacedAndSaidSo() throws {
        let backup = store.file("store.backup")
        try fill(store.open())
        try store.open().maintenance.backup(to: backup, passphrase: passphrase)
        store.waitUntilClosed()
        let handle = try FileHandle(forWritingTo: store.databaseURL)
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 4096))
        try handle.close()
        let report = try restore(backup, into: store)
        guard case .unreadable = report.replaced else {
            Issue.record("a damaged store was reported as \(report.replaced)")
            return
        }
        #expect(try store.open().defaultCredential(for: space)?.password == "pw-bob")
    }

    @Test func aRestoredPassphraseStoreNeedsItsNewPassphraseAndNoKeyFile() throws {
        let backup = store.file("store.backup")
        try fill(store.open())
        try store.open().maintenance.backup(to: backup, passphrase: passphrase)
        let target = try TemporaryStore()
        try StoreFile.restore(
            from: backup, passphrase: passphrase, to: target.databaseURL, key: .passphrase("the store's own"),
            rollbackAnchor: .directory(target.anchorDirectory))
        #expect(!FileManager.default.fileExists(atPath: target.keyFileURL.path))
        let restored = try CredentialStorage(at: target.databaseURL, key: .passphrase("the store's own"), rollbackAnchor: .directory(target.anchorDirectory))
        #expect(try restored.defaultCredential(for: space)?.password == "pw-bob")
        expectError(.wrongKey) {
            try CredentialStorage(at: target.databaseURL, key: .passphrase(passphrase), rollbackAnchor: .directory(target.anchorDirectory))
        }
    }

    @Test func aBackupIsNeverWrittenOverTheStoreItself() throws {
        let storage = try store.open()
        try fill(storage)
        expectError(.invalidInput) { try storage.maintenance.backup(to: store.databaseURL, passphrase: passphrase) }
        #expect(try storage.defaultCredential(for: space)?.password == "pw-bob")
    }

    @Test func anOlderCopyPutBackByHandOpensOnceAccepted() throws {
        do { try store.open().set(Fixture.credential("alice", "a1"), for: space) }
        store.waitUntilClosed()
        let copy = try store.files()
        do { try store.open().set(Fixture.credential("bob", "b1"), for: space) }
        store.waitUntilClosed()
        for suffix in ["-wal", "-shm"] { unlink(store.databaseURL.path + suffix) }
        for (url, data) in copy { try data.write(to: url) }
        let refused = #expect(throws: CredentialStorageError.self) { try store.open() }
        #expect(refused?.code == .tamperDetected)
        // The message names the call that accepts it, and that call does.
        #expect(refused?.message.contains("StoreFile.accept(at:key:)") == true, "\(String(describing: refused))")

        let accepted = try StoreFile.accept(
            at: store.databaseURL, key: .keyFile(store.keyFileURL), rollbackAnchor: .directory(store.anchorDirectory))
        #expect(try accepted.credentials(for: space).keys.sorted() == ["alice"])
        try accepted.set(Fixture.credential("carol", "c1"), for: space)
        #expect(try store.open().credentials(for: space).keys.sorted() == ["alice", "carol"])
    }
}
