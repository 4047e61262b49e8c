import Foundation
import Synchronization
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// docs/architecture.md ("Creating a store"): a missing store is made whole under a temporary
/// name and linked into place, so that every opener either creates the whole store or opens the
/// one another created, and a creation that died leaves only a temporary the next one removes.
@Suite(.cheapKeyDerivation) struct StoreCreationTests {
    let store: TemporaryStore

    init() throws {
        store = try TemporaryStore()
    }

    @Test func sixteenThreadsOpeningAMissingStoreAllOpenTheOneStoreCreated() throws {
        // Rounds after the first create the store again in place of a deleted one, whose record
        // is still in the anchor folder: the new store must be recorded before any open sees it.
        for round in 0..<4 {
            if round > 0 { try removeStore() }
            let outcomes = atOnce(16) { [store] index in
                let storage = try store.open()
                try storage.set(Fixture.credential("user\(index)", "pw-\(round)-\(index)"), for: Fixture.space("host\(index).example.com"))
                return storage.header.storeID
            }
            let failures = outcomes.compactMap { if case .failure(let error) = $0 { "\(error)" } else { nil } }
            #expect(failures.isEmpty, "round \(round): \(failures)")
            let ids = Set(outcomes.compactMap { try? $0.get() })
            #expect(ids.count == 1, "round \(round): \(ids.count) stores were opened")

            let storage = try store.open()
            #expect(ids == [storage.header.storeID])
            let entries = try storage.entries()
            #expect(Set(entries.map(\.user)) == Set((0..<16).map { "user\($0)" }), "round \(round)")
            #expect(try storage.credentials(for: Fixture.space("host7.example.com"))["user7"]?.password == "pw-\(round)-7")
            #expect(try storage.maintenance.verify().isSound)
            let left = try temporaries()
            #expect(left.isEmpty, "round \(round) left \(left)")
        }
    }

    @Test func aPassphraseStoreAndAKeyFileStoreCreatedAtOnceLeaveOneStoreAndSayWhichItIs() throws {
        let outcomes = atOnce(2) { [store] index in
            let key: StoreKey = index == 0 ? .passphrase("correct horse battery") : .keyFile(store.keyFileURL)
            return try CredentialStorage(at: store.databaseURL, key: key, rollbackAnchor: .directory(store.anchorDirectory)).maintenance.isPassphraseProtected
        }
        let opened = outcomes.compactMap { try? $0.get() }
        #expect(opened.count >= 1)
        let protection = try #require(try StoreFile.protection(ofStoreAt: store.databaseURL))
        #expect(opened.allSatisfy { $0 == (protection == .passphrase) })
        for case .failure(let error) in outcomes {
            // The other kind of store is there: said as such, never as locked, damaged or foreign.
            #expect((error as? CredentialStorageError)?.code == .wrongKey, "\(error)")
        }
        if protection == .passphrase {
            #expect(!FileManager.default.fileExists(atPath: store.keyFileURL.path), "a key file that opens nothing is left beside the passphrase store")
        }
        #expect(try temporaries().isEmpty)
    }

    @Test func aCreationThatDiedLeavesATemporaryThatTheNextCreationRemovesUnlessItIsLive() throws {
        try FileManager.default.createDirectory(at: store.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let abandoned = [".credentials.db.4242.1f2e3d.new", ".credentials.db.4242.1f2e3d.new-wal", ".credentials.db.4242.1f2e3d.new-shm",
                         ".credentials.db.77.ab.new-wal", ".store.key.4242.9c.new"]
        let fresh = ".credentials.db.4243.5a.new"
        let held = ".credentials.db.4244.6b.new"
        let notOurs = [".credentials.db.notes", "credentials.db.4242.1f2e3d.new"]
        for name in abandoned + [fresh, held] + notOurs {
            try makeFile(name, age: name == fresh ? 0 : 300)
        }
        // A creator that is still at work (stopped, or slow) holds its temporary's lock.
        let holder = open(store.directory.appendingPathComponent(held).path, O_RDONLY | O_CLOEXEC)
        defer { close(holder) }
        #expect(flock(holder, LOCK_EX | LOCK_NB) == 0)

        let storage = try store.open()
        try storage.set(Fixture.credential("alice"), for: Fixture.space())
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: store.directory.path))
        for name in abandoned { #expect(!left.contains(name), "\(name) was left") }
        for name in [fresh, held] + notOurs { #expect(left.contains(name), "\(name) was removed") }
        #expect(try store.open().credentials(for: Fixture.space())["alice"]?.password == "pw")
    }

    @Test func anEmptyDatabaseIsCorruptBesideAFreshKeyFileOrNone() throws {
        try FileManager.default.createDirectory(at: store.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try makeFile("credentials.db", age: 0, contents: [])
        // No key file: opened with a passphrase, once a new store was made in the empty file.
        expectError(.corrupt) {
            try CredentialStorage(at: store.databaseURL, key: .passphrase("pass"), rollbackAnchor: .directory(store.anchorDirectory))
        }
        // A key file written a moment ago: once taken for a creation still under way.
        _ = try StoreFiles.createKeyFile(store.keyFileURL)
        let error = #expect(throws: CredentialStorageError.self) { try store.open() }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains("is empty") == true)
        #expect(try Data(contentsOf: store.databaseURL).isEmpty, "nothing was written into it")
    }

    @Test func aWALWithoutItsDatabaseIsRefusedNotReplayedOntoANewStore() throws {
        // A connection still open keeps the latest commits in the WAL, as a crash would.
        let storage = try store.open()
        try storage.set(Fixture.credential("bob", "in-the-wal"), for: Fixture.space())
        let wal = try Data(contentsOf: URL(fileURLWithPath: store.databaseURL.path + "-wal"))
        #expect(!wal.isEmpty)
        let other = try TemporaryStore()
        try FileManager.default.createDirectory(at: other.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let orphan = URL(fileURLWithPath: other.databaseURL.path + "-wal")
        try wal.write(to: orphan)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: orphan.path)

        expectError(.corrupt) { try other.open() }
        #expect(!FileManager.default.fileExists(atPath: other.databaseURL.path), "no store was put beside the WAL")
        try FileManager.default.removeItem(at: orphan)
        #expect(try other.open().entries().isEmpty, "once the WAL is gone, a new store is created")
    }

    @Test func eightExportsToOnePathAtOnceEachLeaveAWholeBundle() throws {
        let laptop = try store.open()
        try laptop.set(Fixture.credential("alice", "synced", .synchronizable), for: Fixture.space())
        let peer = try TemporaryStore()
        let desktop = try peer.open()
        try desktop.sync.trust(try laptop.sync.deviceKey)
        let recipient = try desktop.sync.deviceKey
        let bundle = store.file("laptop.csbundle")

        let outcomes = atOnce(8) { _ in try laptop.sync.export(to: bundle, protection: .recipients([recipient])) }
        let failures = outcomes.compactMap { if case .failure(let error) = $0 { "\(error)" } else { nil } }
        #expect(failures.isEmpty, "\(failures)")
        #expect(try desktop.sync.importBundle(from: bundle) == ImportReport(added: 1))
        let left = try FileManager.default.contentsOfDirectory(atPath: bundle.deletingLastPathComponent().path)
        #expect(!left.contains { $0.hasPrefix(".laptop.csbundle.") }, "temporaries were left: \(left)")
    }

    // MARK: Support

    /// Runs `body(index)` on `count` threads let go at once; each one's outcome, by index.
    private func atOnce<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) throws -> T) -> [Result<T, any Error>] {
        let outcomes = Mutex([Result<T, any Error>?](repeating: nil, count: count))
        let gate = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for index in 0..<count {
            done.enter()
            Thread {
                gate.wait()
                let outcome = Result { try body(index) }
                outcomes.withLock { $0[index] = outcome }
                done.leave()
            }.start()
        }
        for _ in 0..<count { gate.signal() }
        done.wait()
        return outcomes.withLock { $0.map { $0! } }
    }

    /// The store's files gone (its record and anchors stay, as after `rm` of the store).
    private func removeStore() throws {
        store.waitUntilClosed()
        for url in [store.databaseURL, store.keyFileURL] + ["-wal", "-shm"].map({ URL(fileURLWithPath: store.databaseURL.path + $0) }) {
            unlink(url.path)
        }
    }

    /// What is hidden in the store's folder: temporaries, since a store has no hidden file.
    private func temporaries() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: store.directory.path).filter { $0.hasPrefix(".") }
    }

    /// A 0600 file in the store's folder, last changed `age` seconds ago.
    private func makeFile(_ name: String, age: TimeInterval, contents: [UInt8] = [1, 2, 3]) throws {
        let url = store.directory.appendingPathComponent(name)
        try Data(contents).write(to: url)
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o600, .modificationDate: Date().addingTimeInterval(-age)], ofItemAtPath: url.path)
    }
}
