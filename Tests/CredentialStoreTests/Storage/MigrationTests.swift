import CredentialStoreMigrations
import Foundation
import GRDB
import Logging
import Testing
@testable import CredentialStore

/// The schema history is forward-only, and a store made by an older version opens with all its data.
@Suite struct MigrationTests {
    @Test func aStoreMadeWithTheFirstMigrationOnlyOpensWithEverythingInIt() throws {
        let store = try TemporaryStore()
        let first = SchemaHistory.migrations[0].identifier
        let space = Fixture.space(realm: "Legacy")
        do {
            // As the first release wrote it: only the first migration, rows and a default choice.
            let opened = try StoreOpener.open(
                databaseURL: store.databaseURL, key: .keyFile(store.keyFileURL), logger: Logger(label: "test"), migrateUpTo: first)
            let applied = try store.rawDatabase().read {
                try String.fetchAll($0, sql: "SELECT identifier FROM schema_migrations")
            }
            #expect(applied == [first])
            #expect(try store.rawDatabase().read { try $0.tableExists("change_log") } == false)
            let spaceIndex = opened.keys.spaceIndex(space)
            try opened.repository.write { writer in
                for (user, password) in [("alice", "a-pw"), ("bob", "b-pw")] {
                    try writer.upsert(opened.keys.seal(
                        Credential(user: user, password: password, persistence: .permanent),
                        in: space, spaceIndex: spaceIndex, created: 1, modified: 1))
                }
                try writer.setDefaultChoice(opened.keys.sealDefault(user: "bob", spaceIndex: spaceIndex))
                // The first release had no table seal to fold these rows into.
                _ = writer.takeRowChanges()
            }
        }

        let storage = try store.open()
        #expect(try storage.credentials(for: space) == [
            "alice": Fixture.credential("alice", "a-pw"), "bob": Fixture.credential("bob", "b-pw"),
        ])
        #expect(try storage.defaultCredential(for: space)?.user == "bob")
        let applied = try store.rawDatabase().read {
            try String.fetchAll($0, sql: "SELECT identifier FROM schema_migrations ORDER BY identifier")
        }
        #expect(applied == SchemaHistory.migrations.map(\.identifier))
        // And the migrated store takes new writes.
        try storage.set(Fixture.credential("carol", "c-pw"), for: space)
        #expect(try store.open().credentials(for: space).count == 3)
    }

    @Test func migrationIdentifiersAreNumberedAndInOrder() {
        let identifiers = SchemaHistory.migrations.map(\.identifier)
        #expect(identifiers == identifiers.sorted())
        #expect(Set(identifiers).count == identifiers.count)
        for (offset, identifier) in identifiers.enumerated() {
            #expect(identifier.hasPrefix(String(format: "%04d_", offset + 1)))
        }
    }

    @Test func aStoreMigratedByANewerVersionIsRefused() throws {
        let store = try TemporaryStore()
        do { try store.open().set(Fixture.credential("alice"), for: Fixture.space()) }
        try store.rawDatabase().write {
            try $0.execute(sql: "INSERT INTO schema_migrations (identifier) VALUES ('9999_from_the_future')")
        }
        expectError(.unsupportedFormatVersion) { try store.open() }
    }
}
