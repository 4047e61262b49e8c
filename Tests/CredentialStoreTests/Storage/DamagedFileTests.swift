import Foundation
import GRDB
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// Damage the corruption trials (Harnesses/credstore-torture corrupt) found SQLite or the opener
/// taking silently: each is now a typed error, never an empty or partial answer.
@Suite struct DamagedFileTests {
    let store: TemporaryStore
    let space = Fixture.space(realm: "Damaged")

    init() throws {
        store = try TemporaryStore()
        let storage = try store.open()
        for index in 0..<200 {
            try storage.set(Fixture.credential("user\(index)", String(repeating: "p", count: 40)), for: Fixture.space("host\(index).example.com"))
        }
        try storage.set(Fixture.credential("alice", "pw"), for: space)
    }

    @Test func aDatabaseEmptiedBesideAnOldKeyFileIsCorruptNotANewStore() throws {
        store.waitUntilClosed()
        try Data().write(to: store.databaseURL)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-300)], ofItemAtPath: store.keyFileURL.path)
        expectError(.corrupt) { try store.open() }
        // Nothing was written over it.
        #expect(try Data(contentsOf: store.databaseURL).isEmpty)
    }

    @Test func aDatabaseEmptiedBesideItsWALIsCorruptNotANewStore() throws {
        // A connection still open keeps the latest commits in the WAL, as a crash would.
        let storage = try store.open()
        try storage.set(Fixture.credential("bob", "in-the-wal"), for: space)
        let wal = try Data(contentsOf: URL(fileURLWithPath: store.databaseURL.path + "-wal"))
        #expect(!wal.isEmpty)
        let copy = try TemporaryStore()
        try FileManager.default.createDirectory(at: copy.directory, withIntermediateDirectories: true)
        try Data().write(to: copy.databaseURL)
        try wal.write(to: URL(fileURLWithPath: copy.databaseURL.path + "-wal"))
        try FileManager.default.copyItem(at: store.keyFileURL, to: copy.keyFileURL)
        for path in [copy.databaseURL.path, copy.databaseURL.path + "-wal", copy.keyFileURL.path] {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        }
        expectError(.corrupt) { try copy.open() }
    }

    @Test func aDatabaseCutShortIsCorruptEvenForOneLookup() throws {
        store.waitUntilClosed()
        let bytes = try Data(contentsOf: store.databaseURL)
        try bytes.prefix(bytes.count / 2).write(to: store.databaseURL)
        expectError(.corrupt) {
            let storage = try store.open()
            return try storage.defaultCredential(for: space)
        }
    }

    @Test(arguments: [
        "UPDATE schema_migrations SET identifier = '0002_chXnge log' WHERE identifier = '0002_change_log'",
        "UPDATE schema_migrations SET identifier = X'ff00' WHERE identifier = '0001_initial'",
        "INSERT INTO schema_migrations VALUES ('garbage')",
    ])
    func aDamagedSchemaHistoryIsCorruptNotANewerVersion(edit: String) throws {
        try store.rawDatabase().writeWithoutTransaction { db in
            // The damage as bytes would do it: past the table's declared constraints.
            try db.execute(sql: "PRAGMA writable_schema = ON")
            try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
            try db.execute(sql: edit)
        }
        expectError(.corrupt) { try store.open() }
    }
}
