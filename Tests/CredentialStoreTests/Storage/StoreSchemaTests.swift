import CredentialStoreMigrations
import Foundation
import GRDB
import Logging
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// Opening refuses a store whose schema is not exactly what the migrations built: a trigger,
/// view, index or table planted with `sqlite3`, or one removed.
@Suite struct StoreSchemaTests {
    /// Fails when a migration was added or changed and ``StoreSchema/pinned`` was not regenerated;
    /// its message is the new value to paste.
    @Test func thePinnedDigestIsWhatTheMigrationsBuild() throws {
        let newest = try #require(SchemaHistory.migrations.last).identifier
        let built = try StoreSchema.build(through: newest)
        let hex = built.digest.map { String(format: "%02x", $0) }.joined()
        #expect(StoreSchema.pinned.migration == newest && StoreSchema.pinned.digest == hex,
                "regenerate StoreSchema.pinned: (migration: \"\(newest)\", digest: \"\(hex)\")")
        #expect(built.newestMigration == newest)
    }

    @Test func aNewStoreAndAMigratedOneHaveTheSchemaTheMigrationsBuild() throws {
        let store = try TemporaryStore()
        try store.open().set(Fixture.credential("alice"), for: Fixture.space())
        let newest = try #require(SchemaHistory.migrations.last).identifier
        let onDisk = try store.rawDatabase().read { try SQLiteAccess(db: $0).schemaState() }
        #expect(onDisk == (try StoreSchema.build(through: newest)))
        #expect(try store.open().credentials(for: Fixture.space()).count == 1)
    }

    /// What an attacker with `sqlite3` and no key adds or takes away.
    static let edits = [
        // Puts a removed credential back: `remove` succeeds, `get` keeps answering.
        "CREATE TRIGGER keep AFTER DELETE ON credentials BEGIN INSERT INTO credentials SELECT old.*; END",
        "CREATE TRIGGER spy AFTER INSERT ON credentials BEGIN SELECT 1; END",
        "CREATE VIEW peek AS SELECT * FROM credentials",
        "CREATE TABLE extra (x)",
        "CREATE INDEX extra_index ON credentials (modified)",
        "DROP TABLE change_entries",
    ]

    @Test(arguments: edits)
    func anEditedSchemaIsTampering(edit: String) throws {
        let store = try TemporaryStore()
        try store.open().set(Fixture.credential("alice"), for: Fixture.space())
        try store.rawDatabase().write { try $0.execute(sql: edit) }
        for check in [CredentialStorage.IntegrityCheck.onOpen, .deferredToVerify] {
            expectError(.tamperDetected) { try store.open(integrityCheck: check) }
        }
    }

    /// A store an older version left is checked against its own migrations' schema before the
    /// pending ones run, so a planted trigger never fires inside a migration's writes.
    @Test func anOlderStoreWithAPlantedTriggerIsRefusedBeforeItIsMigrated() throws {
        let store = try TemporaryStore()
        let first = SchemaHistory.migrations[0].identifier
        _ = try StoreOpener.open(
            databaseURL: store.databaseURL, key: .keyFile(store.keyFileURL), logger: Logger(label: "test"), migrateUpTo: first)
        try store.rawDatabase().write { try $0.execute(sql: "CREATE TRIGGER spy AFTER INSERT ON key_slots BEGIN SELECT 1; END") }
        expectError(.tamperDetected) { try store.open() }
        let applied = try store.rawDatabase().read { try String.fetchAll($0, sql: "SELECT identifier FROM schema_migrations") }
        #expect(applied == [first], "nothing was migrated")
    }

    @Test func aPlantedTriggerCannotKeepARemovedCredential() throws {
        let store = try TemporaryStore()
        let space = Fixture.space()
        try store.open().set(Fixture.credential("alice", "secret"), for: space)
        try store.rawDatabase().write {
            try $0.execute(sql: "CREATE TRIGGER keep AFTER DELETE ON credentials BEGIN INSERT INTO credentials SELECT old.*; END")
        }
        // Either the remove is refused, or the credential is really gone: never both success and
        // the old password still answering.
        let removed = try? store.open().remove(user: "alice", for: space, options: .removeSynchronizable)
        if removed == true {
            #expect(try store.open(integrityCheck: .onOpen).defaultCredential(for: space) == nil)
        }
        expectError(.tamperDetected) { try store.open(integrityCheck: .onOpen) }
    }
}
