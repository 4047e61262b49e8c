import Foundation
import GRDB
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// docs/contract.md ("At rest"): what the files hold, and how a wrong key, damage and tampering are told apart.
@Suite(.cheapKeyDerivation) struct AtRestTests {
    let store: TemporaryStore
    let space = Fixture.space()

    init() throws {
        store = try TemporaryStore()
    }

    /// Edits the store file directly, as an attacker with write access would.
    private func withRawDatabase(_ body: (Database) throws -> Void) throws {
        try store.rawDatabase().writeWithoutTransaction(body)
    }

    private func mode(_ url: URL) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    // MARK: Keys

    @Test func aWrongPassphraseIsWrongKeyAndLeavesTheFileByteIdentical() throws {
        do {
            let storage = try CredentialStorage(at: store.databaseURL, key: .passphrase("correct horse battery"))
            try storage.set(Fixture.credential("alice", "pw"), for: space)
        }
        store.waitUntilClosed()
        let before = try Data(contentsOf: store.databaseURL)
        expectError(.wrongKey, secrets: ["tr0ub4dor", "correct horse"]) {
            try CredentialStorage(at: store.databaseURL, key: .passphrase("tr0ub4dor"))
        }
        #expect(try Data(contentsOf: store.databaseURL) == before)
        let reopened = try CredentialStorage(at: store.databaseURL, key: .passphrase("correct horse battery"))
        #expect(try reopened.credentials(for: space)["alice"]?.password == "pw")
    }

    @Test func anotherKeyFileIsWrongKey() throws {
        do { try store.open().set(Fixture.credential("alice"), for: space) }
        store.waitUntilClosed()
        let before = try Data(contentsOf: store.databaseURL)
        let otherKey = store.directory.appendingPathComponent("other.key")
        _ = try StoreFiles.createKeyFile(otherKey)
        expectError(.wrongKey) { try CredentialStorage(at: store.databaseURL, key: .keyFile(otherKey)) }
        expectError(.wrongKey) { try CredentialStorage(at: store.databaseURL, key: .passphrase("any")) }
        #expect(try Data(contentsOf: store.databaseURL) == before)
    }

    @Test func anExistingStoreWithoutItsKeyFileIsNotFound() throws {
        do { try store.open().set(Fixture.credential("alice"), for: space) }
        try FileManager.default.removeItem(at: store.keyFileURL)
        expectError(.notFound) { try store.open() }
    }

    // MARK: Damage

    @Test func aDamagedSQLiteHeaderIsCorrupt() throws {
        do { try store.open().set(Fixture.credential("alice"), for: space) }
        store.waitUntilClosed()
        let handle = try FileHandle(forWritingTo: store.databaseURL)
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 16))
        try handle.close()
        expectError(.corrupt) { try store.open() }
    }

    @Test func aDamagedKeySlotIsCorruptNotWrongKey() throws {
        do { try store.open().set(Fixture.credential("alice"), for: space) }
        try withRawDatabase { db in
            let wrapped = try Data.fetchOne(db, sql: "SELECT wrapped_root_key FROM key_slots")!
            var flipped = [UInt8](wrapped)
            flipped[30] ^= 0x01
            try db.execute(sql: "UPDATE key_slots SET wrapped_root_key = ?", arguments: [Data(flipped)])
        }
        expectError(.corrupt) { try store.open() }
    }

    @Test func aMissingHeaderRowIsCorrupt() throws {
        do { try store.open().set(Fixture.credential("alice"), for: space) }
        try withRawDatabase { try $0.execute(sql: "DELETE FROM store_header") }
        expectError(.corrupt) { try store.open() }
    }

    @Test func aStoreFromANewerFormatIsRefused() throws {
        do { try store.open().set(Fixture.credential("alice"), for: space) }
        try withRawDatabase { try $0.execute(sql: "UPDATE store_header SET format = 99") }
        expectError(.unsupportedFormatVersion) { try store.open() }
    }

    // MARK: Tampering

    @Test func ciphertextsSwappedBetweenRowsAreTamperDetected() throws {
        do {
            let storage = try store.open()
            try storage.set(Fixture.credential("alice", "alice-pw"), for: space)
            try storage.set(Fixture.credential("bob", "bob-pw"), for: space)
        }
        try withRawDatabase { db in
            let rows = try Row.fetchAll(db, sql: "SELECT user_index, sealed_credential FROM credentials")
            try db.execute(sql: "UPDATE credentials SET sealed_credential = ? WHERE user_index = ?", arguments: [rows[1][1] as Data, rows[0][0] as Data])
            try db.execute(sql: "UPDATE credentials SET sealed_credential = ? WHERE user_index = ?", arguments: [rows[0][1] as Data, rows[1][0] as Data])
        }
        // The rows no longer match the table seal, so a lookup refuses; and each row's own
        // authentication refuses the moved ciphertext too.
        expectError(.tamperDetected) { try store.open().defaultCredential(for: space) }
        let storage = try CredentialStorage(at: store.databaseURL, key: .keyFile(store.keyFileURL), integrityCheck: .onOpen)
        expectError(.tamperDetected) { try storage.credentials(for: space) }
        expectError(.tamperDetected) { try storage.defaultCredential(for: space) }
        expectError(.tamperDetected) { try storage.allCredentials() }
    }

    @Test(arguments: [
        "UPDATE credentials SET persistence = 3",
        "UPDATE credentials SET created = created - 1000",
        "UPDATE credentials SET modified = modified + 1",
    ])
    func anEditedClearColumnIsTamperDetected(edit: String) throws {
        do { try store.open().set(Fixture.credential("alice", "pw"), for: space) }
        try withRawDatabase { try $0.execute(sql: edit) }
        // Each row's own authentication, whatever the seal says: a credential made
        // synchronizable without its sync register is refused by a listing's full check too.
        if edit.contains("persistence") { expectError(.tamperDetected) { try store.open().entries() } }
        let storage = try store.open(integrityCheck: .onOpen)
        expectError(.tamperDetected) { try storage.defaultCredential(for: space) }
        expectError(.tamperDetected) { try storage.allCredentials() }
    }

    @Test func aDefaultChoiceRedirectedToAnotherUserIsTamperDetected() throws {
        do {
            let storage = try store.open()
            try storage.set(Fixture.credential("alice"), for: space)
            try storage.set(Fixture.credential("bob"), for: space)
        }
        try withRawDatabase { db in
            let bob = try Data.fetchOne(db, sql: "SELECT user_index FROM credentials WHERE user_index NOT IN (SELECT user_index FROM default_choices)")!
            try db.execute(sql: "UPDATE default_choices SET user_index = ?", arguments: [bob])
        }
        expectError(.tamperDetected) { try store.open().defaultCredential(for: space) }
        let storage = try CredentialStorage(at: store.databaseURL, key: .keyFile(store.keyFileURL), integrityCheck: .onOpen)
        // The default pointer is only trusted after its sealed user opens under its own indexes.
        expectError(.tamperDetected) { try storage.set(Fixture.credential("carol"), for: space) }
    }

    // MARK: Files

    @Test func aStoreFileReadableByOthersIsRefused() throws {
        do { try store.open().set(Fixture.credential("alice"), for: space) }
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: store.databaseURL.path)
        expectError(.permissionsTooOpen) { try store.open() }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: store.databaseURL.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: store.keyFileURL.path)
        expectError(.permissionsTooOpen) { try store.open() }
    }

    @Test func aSymlinkedStoreFileIsRefused() throws {
        do { try store.open().set(Fixture.credential("alice"), for: space) }
        let link = store.directory.appendingPathComponent("link.db")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: store.databaseURL)
        expectError(.permissionsTooOpen) { try CredentialStorage(at: link, key: .keyFile(store.keyFileURL)) }
    }

    @Test func filesAre0600InA0700FolderEvenUnderUmask022() throws {
        let previous = umask(0o022)
        defer { umask(previous) }
        let storage = try store.open()
        try storage.set(Fixture.credential("alice"), for: space)
        #expect(try mode(store.directory) == 0o700)
        #expect(try mode(store.databaseURL) == 0o600)
        #expect(try mode(store.keyFileURL) == 0o600)
        for suffix in ["-wal", "-shm"] {
            let url = URL(fileURLWithPath: store.databaseURL.path + suffix)
            #expect(FileManager.default.fileExists(atPath: url.path), "\(suffix) exists while open")
            #expect(try mode(url) == 0o600, "\(suffix)")
        }
    }

    @Test func noPlaintextReachesAnyFileEvenAfterDeletes() throws {
        let kept = ["kept-host-canary.example", "kept-realm-canary", "kept-user-canary", "kept-password-canary"]
        let removed = ["gone-host-canary.example", "gone-realm-canary", "gone-user-canary", "gone-password-canary"]
        func scan() throws {
            for (url, bytes) in try store.files() {
                for canary in kept + removed {
                    #expect(bytes.range(of: Data(canary.utf8)) == nil, "\(canary) found in \(url.lastPathComponent)")
                }
            }
        }
        do {
            let storage = try store.open()
            for words in [kept, removed] {
                let canarySpace = ProtectionSpace(host: words[0], port: 443, protocol: "https", realm: words[1])
                try storage.set(Credential(user: words[2], password: words[3], persistence: .permanent), for: canarySpace)
                try storage.set(Credential(user: words[2] + "-2", password: words[3] + "-2", persistence: .synchronizable), for: canarySpace)
            }
            let gone = ProtectionSpace(host: removed[0], port: 443, protocol: "https", realm: removed[1])
            try storage.remove(user: removed[2], for: gone)
            try storage.remove(user: removed[2] + "-2", for: gone, options: .removeSynchronizable)
            try scan()  // while open: database, WAL and shared memory
        }
        try scan()  // after close
        let reopened = try store.open()
        #expect(try reopened.allCredentials().count == 1)
        try scan()
    }

    /// The sealed space and credential of `user`'s row in `space`, as they are on disk.
    private func ciphertexts(_ user: String, in space: ProtectionSpace, of storage: CredentialStorage) throws -> [Data] {
        let keys = storage.keys
        let spaceIndex = keys.spaceIndex(space)
        let row = try #require(try storage.repository.read {
            try $0.credential(space: spaceIndex, user: keys.userIndex(spaceIndex: spaceIndex, user: user))
        })
        return [Data(row.sealedSpace), Data(row.sealedCredential)]
    }

    /// The store's files that hold any of `ciphertexts`.
    private func holding(_ ciphertexts: [Data]) throws -> [String] {
        try store.files().filter { _, bytes in ciphertexts.contains { bytes.range(of: $0) != nil } }.map(\.key.lastPathComponent)
    }

    @Test func aReplacedOrRemovedCredentialsCiphertextsLeaveEveryFileAtOnce() throws {
        let storage = try store.open()
        let space = Fixture.space("retired.example.com")
        try storage.set(Credential(user: "alice", password: "first", persistence: .permanent), for: space)
        try storage.set(Credential(user: "bob", password: "kept", persistence: .permanent), for: space)
        func ciphertexts(_ user: String) throws -> [Data] { try self.ciphertexts(user, in: space, of: storage) }
        let first = try ciphertexts("alice")
        #expect(try !holding(first).isEmpty, "a stored row's ciphertexts are on disk")

        // Still open, nothing closed: the WAL held the old row's frames until its checkpoint.
        try storage.set(Credential(user: "alice", password: "second", persistence: .permanent), for: space)
        #expect(try holding(first).isEmpty, "the replaced password's ciphertext is in no file")
        let second = try ciphertexts("alice")
        #expect(try storage.remove(user: "alice", for: space))
        #expect(try holding(second).isEmpty, "the removed credential's ciphertexts are in no file")
        #expect(try !holding(ciphertexts("bob")).isEmpty)
        #expect(try storage.credentials(for: space).keys.sorted() == ["bob"])
    }

    @Test func aCheckpointAnotherReaderHeldOffRunsWithTheNextWrite() throws {
        let storage = try store.open()
        let space = Fixture.space("held.example.com")
        try storage.set(Credential(user: "alice", password: "gone-soon", persistence: .permanent), for: space)
        let removed = try ciphertexts("alice", in: space, of: storage)

        // Another connection reads from the WAL (a snapshot that still has alice) while she is removed.
        let reader = try DatabaseQueue(path: store.databaseURL.path)
        let (reading, release, done) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        Thread {
            try? reader.read { db in
                _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM credentials")
                reading.signal()
                release.wait()
            }
            done.signal()
        }.start()
        reading.wait()
        #expect(try storage.remove(user: "alice", for: space))
        #expect(try holding(removed) == ["credentials.db-wal"], "held off by the reader, the checkpoint left the WAL as it was")

        release.signal()
        done.wait()
        // The next write, of anything, empties the WAL.
        try storage.set(Credential(user: "bob", password: "later", persistence: .permanent), for: space)
        #expect(try holding(removed).isEmpty, "the removed credential's ciphertexts are in no file")
    }
}
