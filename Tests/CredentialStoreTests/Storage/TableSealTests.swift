import Foundation
import GRDB
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// Tampering beyond one row: deleting a row, restoring an older copy of a row, or inserting a row
/// copied from another store leaves every remaining row authentic on its own, so only the table
/// seal can see it. Opening checks only the seal's MAC (O(1)); each read of what was touched
/// refuses, the rest of the store keeps answering, and `verify()` reports the seal.
@Suite struct TableSealTests {
    let store: TemporaryStore
    let space = Fixture.space(realm: "Sealed")
    let elsewhere = Fixture.space("elsewhere.example.com")

    init() throws {
        store = try TemporaryStore()
        // A credential nothing below touches: it must keep answering.
        try store.open().set(Fixture.credential("zoe", "untouched"), for: elsewhere)
    }

    private func edit(_ body: (Database) throws -> Void) throws {
        try store.rawDatabase().writeWithoutTransaction(body)
    }

    /// Every lookup of the sealed space refuses.
    private static func lookups(of space: ProtectionSpace) -> (CredentialStorage) throws -> Void {
        { storage in
            expectError(.tamperDetected) { try storage.defaultCredential(for: space) }
            expectError(.tamperDetected) { try storage.credentials(for: space) }
        }
    }

    /// The store opens (the seal's MAC holds), `refusals` see the tampering, a listing refuses,
    /// the untouched space still answers, and a store opened for diagnosis reports the seal.
    private func expectSealBroken(_ refusals: ((CredentialStorage) throws -> Void)? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let storage = try store.open()
        try (refusals ?? Self.lookups(of: space))(storage)
        expectError(.tamperDetected, sourceLocation: sourceLocation) { try storage.entries() }
        #expect(try storage.defaultCredential(for: elsewhere)?.password == "untouched", sourceLocation: sourceLocation)
        let diagnosed = try store.open(integrityCheck: .deferredToVerify)
        let report = try diagnosed.maintenance.verify()
        #expect(!report.isSound, sourceLocation: sourceLocation)
        #expect(report.problems.contains { $0.contains("seal") }, "\(report.problems)", sourceLocation: sourceLocation)
    }

    /// The seal itself is edited: opening refuses, and verify reports it.
    private func expectOpenRefused(sourceLocation: SourceLocation = #_sourceLocation) throws {
        expectError(.tamperDetected, sourceLocation: sourceLocation) { try store.open() }
        let report = try store.open(integrityCheck: .deferredToVerify).maintenance.verify()
        #expect(!report.isSound, sourceLocation: sourceLocation)
        #expect(report.problems.contains { $0.contains("seal") }, "\(report.problems)", sourceLocation: sourceLocation)
    }

    private func credentialRows(_ db: Database) throws -> [Row] {
        try Row.fetchAll(db, sql: "SELECT * FROM credentials")
    }

    private func insert(_ row: Row, into table: String, _ db: Database) throws {
        let columns = Array(row.columnNames)
        try db.execute(
            sql: "INSERT OR REPLACE INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))",
            arguments: StatementArguments(columns.map { row[$0] as DatabaseValue }))
    }

    @Test func aSoundStoreOpensAndVerifiesThroughEveryKindOfWrite() throws {
        do {
            let storage = try store.open()
            try storage.set(Fixture.credential("alice", "a1"), for: space)
            try storage.set(Fixture.credential("bob", "b1"), for: space)
            try storage.setDefaultCredential(Fixture.credential("bob", "b1"), for: space)
            try storage.set(Fixture.credential("alice", "a2"), for: space)
            _ = try storage.remove(user: "bob", for: space)
            try storage.set(Fixture.credential("carol", "c1", .synchronizable), for: Fixture.space("other.example.com"))
            let other = try TemporaryStore().open()
            try storage.sync.trust(try other.sync.deviceKey)
            try storage.maintenance.rekey()
            try storage.set(Fixture.credential("dave", "d1"), for: space)
        }
        let reopened = try store.open()
        #expect(try reopened.maintenance.verify().isSound)
        #expect(try reopened.credentials(for: space).keys.sorted() == ["alice", "dave"])
    }

    /// The sealed space's blind index, to pick its rows out of the raw tables.
    private func spaceIndex() throws -> Data {
        Data(try store.open().keys.spaceIndex(space).bytes)
    }

    @Test func restoringAnOlderCopyOfOneRowIsDetected() throws {
        do { try store.open().set(Fixture.credential("alice", "old-password"), for: space) }
        let index = try spaceIndex()
        let old = try store.rawDatabase().read { try Row.fetchAll($0, sql: "SELECT * FROM credentials WHERE space_index = ?", arguments: [index]) }
        do { try store.open().set(Fixture.credential("alice", "new-password"), for: space) }
        // The old row is authentic on its own (same store, same keys, same row identity).
        try edit { db in try insert(old[0], into: "credentials", db) }
        try expectSealBroken()
    }

    @Test func deletingARowIsDetected() throws {
        do {
            let storage = try store.open()
            try storage.set(Fixture.credential("alice"), for: space)
            try storage.set(Fixture.credential("bob"), for: space)
        }
        let index = try spaceIndex()
        try edit { db in
            try db.execute(sql: "DELETE FROM credentials WHERE space_index = ?1 AND user_index = (SELECT min(user_index) FROM credentials WHERE space_index = ?1)",
                           arguments: [index])
        }
        try expectSealBroken()
    }

    @Test func aRowCopiedInFromAnotherStoreIsDetected() throws {
        let other = try TemporaryStore()
        do {
            try store.open().set(Fixture.credential("alice"), for: space)
            try other.open().set(Fixture.credential("mallory", "injected"), for: Fixture.space("evil.example.com"))
        }
        let foreign = try other.rawDatabase().read { try credentialRows($0) }
        try edit { db in try insert(foreign[0], into: "credentials", db) }
        // Under another store's keys the row is found by no lookup here: the listing refuses it.
        try expectSealBroken { _ in }
    }

    @Test func deletingADefaultChoiceIsDetected() throws {
        do {
            let storage = try store.open()
            try storage.set(Fixture.credential("alice"), for: space)
            try storage.set(Fixture.credential("bob"), for: space)
            try storage.setDefaultCredential(Fixture.credential("bob"), for: space)
        }
        let index = try spaceIndex()
        try edit { try $0.execute(sql: "DELETE FROM default_choices WHERE space_index = ?", arguments: [index]) }
        try expectSealBroken()
    }

    @Test func restoringAnOlderDefaultChoiceIsDetected() throws {
        do {
            let storage = try store.open()
            try storage.set(Fixture.credential("alice"), for: space)
            try storage.set(Fixture.credential("bob"), for: space)
        }
        let index = try spaceIndex()
        let old = try store.rawDatabase().read { try Row.fetchAll($0, sql: "SELECT * FROM default_choices WHERE space_index = ?", arguments: [index]) }
        do { try store.open().setDefaultCredential(Fixture.credential("bob"), for: space) }
        try edit { db in try insert(old[0], into: "default_choices", db) }
        try expectSealBroken()
    }

    @Test func aTrustedDeviceCopiedInFromAnotherStoreIsDetected() throws {
        let other = try TemporaryStore()
        do {
            _ = try store.open().sync.deviceKey
            let trusting = try other.open()
            try trusting.sync.trust(try TemporaryStore().open().sync.deviceKey)
        }
        let foreign = try other.rawDatabase().read { try Row.fetchAll($0, sql: "SELECT * FROM trusted_devices") }
        try edit { db in try insert(foreign[0], into: "trusted_devices", db) }
        try expectSealBroken { storage in expectError(.tamperDetected) { try storage.sync.trustedDevices() } }
    }

    @Test(arguments: [
        "UPDATE store_seal SET generation = generation + 1",
        "UPDATE store_seal SET row_count = row_count - 1",
        "UPDATE store_seal SET digest = zeroblob(16)",
        "DELETE FROM store_seal",
    ])
    func anEditedOrMissingSealIsDetected(edit statement: String) throws {
        do { try store.open().set(Fixture.credential("alice"), for: space) }
        try edit { try $0.execute(sql: statement) }
        try expectOpenRefused()
    }

    @Test func anEarlierSealPutBackOverAPartialRollbackIsDetected() throws {
        // A seal row matches only the exact set of rows it was made for. Putting back an earlier
        // one after deleting the rows added since still fails while any other row changed in
        // between; restoring every row as well is a rollback of the whole store, which only the
        // rollback anchor outside the file can catch.
        do { try store.open().set(Fixture.credential("alice", "a1"), for: space) }
        let oldSeal = try store.rawDatabase().read { try Row.fetchAll($0, sql: "SELECT * FROM store_seal") }
        do {
            let storage = try store.open()
            try storage.set(Fixture.credential("alice", "a2"), for: space)
            try storage.set(Fixture.credential("bob", "b1"), for: space)
        }
        try edit { db in
            try db.execute(sql: "DELETE FROM credentials WHERE user_index NOT IN (SELECT user_index FROM default_choices)")
            try insert(oldSeal[0], into: "store_seal", db)
        }
        // An older seal is below the generation the rollback anchor recorded.
        try expectOpenRefused()
    }

    @Test func tamperingWhileTheStoreIsOpenIsSeenByTheNextLookup() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "a1"), for: space)
        try storage.set(Fixture.credential("bob", "b1"), for: space)
        // Checked once: the interior nodes above the bucket are kept for later lookups.
        #expect(try storage.credentials(for: space).count == 2)
        let index = try spaceIndex()
        try edit { try $0.execute(sql: "DELETE FROM credentials WHERE space_index = ? AND user_index NOT IN (SELECT user_index FROM default_choices)", arguments: [index]) }
        try Self.lookups(of: space)(storage)
        #expect(try storage.defaultCredential(for: elsewhere)?.password == "untouched")
    }

    @Test func keptNodesNeverHideAnotherInstancesWrites() throws {
        // Enough spaces and lookups that the reader reads every interior node at once, then keeps
        // them while another instance's writes change the tree under it.
        let reader = try store.open()
        let writer = try store.open()
        let spaces = (0..<40).map { Fixture.space("host\($0).example.com") }
        for (index, space) in spaces.enumerated() { try writer.set(Fixture.credential("u", "p\(index)-0"), for: space) }
        for round in 1...3 {
            for (index, space) in spaces.enumerated() {
                #expect(try reader.defaultCredential(for: space)?.password == "p\(index)-\(round - 1)")
            }
            for (index, space) in spaces.enumerated() {
                try writer.set(Fixture.credential("u", "p\(index)-\(round)"), for: space)
            }
        }
        #expect(try reader.defaultCredential(for: spaces[7])?.password == "p7-3")
        // And a row deleted under the reader, which holds every node, is still refused.
        try edit { try $0.execute(sql: "DELETE FROM credentials WHERE user_index = (SELECT max(user_index) FROM credentials)") }
        #expect(throws: CredentialStorageError.self) { try reader.entries() }
    }

    /// Every table a lookup depends on, as raw rows.
    private func snapshotTables() throws -> [String: [Row]] {
        try store.rawDatabase().read { db in
            var tables: [String: [Row]] = [:]
            for table in ["credentials", "default_choices", "seal_nodes", "store_seal"] {
                tables[table] = try Row.fetchAll(db, sql: "SELECT * FROM \(table)")
            }
            return tables
        }
    }

    private func putBack(_ tables: [String: [Row]], only names: [String]) throws {
        try edit { db in
            for name in names {
                try db.execute(sql: "DELETE FROM \(name)")
                for row in tables[name]! { try insert(row, into: name, db) }
            }
        }
    }

    @Test func anOlderCopyOfTheTreeWithoutItsSealIsDetected() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "a1"), for: space)
        let old = try snapshotTables()
        try storage.set(Fixture.credential("alice", "a2"), for: space)
        // The rows and the tree's nodes of before, under the current seal: the root differs.
        try putBack(old, only: ["credentials", "default_choices", "seal_nodes"])
        expectError(.tamperDetected) { try store.open().defaultCredential(for: space) }
        // An instance that kept the nodes it checked refuses too: the bucket is not its parent's.
        expectError(.tamperDetected) { try storage.defaultCredential(for: space) }
        let report = try store.open(integrityCheck: .deferredToVerify).maintenance.verify()
        #expect(report.problems.contains { $0.contains("seal") }, "\(report.problems)")
    }

    @Test func aWholeOlderStatePutBackUnderAnOpenStoreIsRefusedByIt() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "a1"), for: space)
        let old = try snapshotTables()
        try storage.set(Fixture.credential("alice", "a2"), for: space)
        #expect(try storage.defaultCredential(for: space)?.password == "a2")
        // Consistent in itself, seal included: only a generation seen before gives it away.
        try putBack(old, only: ["credentials", "default_choices", "seal_nodes", "store_seal"])
        expectError(.tamperDetected, secrets: ["a1"]) { try storage.defaultCredential(for: space) }
        expectError(.tamperDetected) { try store.open() }
    }

    @Test func aWriteByAnInstanceOpenedBeforeARollbackDoesNotMakeItCurrent() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "a1"), for: space)
        let old = try snapshotTables()
        try storage.set(Fixture.credential("alice", "a2"), for: space)
        // Opened (anchor checked) before the older copy is put back, as `add` waiting at its prompt.
        let waiting = try store.open()
        try putBack(old, only: ["credentials", "default_choices", "seal_nodes", "store_seal"])
        // Its write would seal the older state one generation on, level with the anchor.
        expectError(.tamperDetected) { try waiting.set(Fixture.credential("bob", "b1"), for: elsewhere) }
        expectError(.tamperDetected) { try waiting.maintenance.rekey() }
        expectError(.tamperDetected, secrets: ["a1"]) { try waiting.defaultCredential(for: space) }
        expectError(.tamperDetected) { try waiting.entries() }
        expectError(.tamperDetected) { try store.open() }
    }

    @Test func anInstanceThatSawOnlyAnOlderSealRefusesARollbackBelowTheAnchor() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "a1"), for: space)
        let reader = try store.open()
        #expect(try reader.defaultCredential(for: space)?.password == "a1")
        try storage.set(Fixture.credential("alice", "a2"), for: space)
        let old = try snapshotTables()
        try storage.set(Fixture.credential("alice", "a3"), for: space)
        // Put back a state newer than any the reader saw, but older than the anchor's.
        try putBack(old, only: ["credentials", "default_choices", "seal_nodes", "store_seal"])
        expectError(.tamperDetected, secrets: ["a2"]) { try reader.defaultCredential(for: space) }
    }

    @Test func anEditedNodeOfTheTreeIsDetectedByLookupsAndRefusedByWrites() throws {
        do { try store.open().set(Fixture.credential("alice", "a1"), for: space) }
        // Every interior node (level < 3) replaced by bytes of its size: each is its parent's slot.
        try edit { try $0.execute(sql: "UPDATE seal_nodes SET body = randomblob(length(body)) WHERE id < (3 << 32)") }
        let storage = try store.open()
        expectError(.tamperDetected) { try storage.defaultCredential(for: space) }
        expectError(.tamperDetected) { try storage.defaultCredential(for: elsewhere) }
        expectError(.tamperDetected) { try storage.set(Fixture.credential("bob", "b1"), for: space) }
        #expect(!(try store.open(integrityCheck: .deferredToVerify).maintenance.verify().isSound))
        // A node that is not a blob at all is tampering too, not damage.
        try edit { try $0.execute(sql: "UPDATE seal_nodes SET body = 'text' WHERE id = (SELECT max(id) FROM seal_nodes)") }
        expectError(.tamperDetected) { try store.open().entries() }
    }

    @Test func aWrongKeyIsReportedAsSuchBeforeAnySealCheck() throws {
        // A wrong key is reported as such, before any seal check (which would need the keys).
        do { try store.open().set(Fixture.credential("alice"), for: space) }
        let otherKey = try TemporaryStore()
        _ = try otherKey.open()
        expectError(.wrongKey) { try CredentialStorage(at: store.databaseURL, key: .keyFile(otherKey.keyFileURL)) }
    }

    // MARK: Rollback of the whole store

    /// Puts the store's files back as `files` had them (the store closed).
    private func restore(_ files: [URL: Data]) throws {
        store.waitUntilClosed()
        for name in try FileManager.default.contentsOfDirectory(atPath: store.directory.path) {
            try FileManager.default.removeItem(at: store.directory.appendingPathComponent(name))
        }
        for (url, data) in files {
            try data.write(to: url)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        }
    }

    @Test func aWholeStoreRolledBackIsDetectedByItsAnchorEvenOnAOneLookupOpen() throws {
        do { try store.open().set(Fixture.credential("alice", "old-password"), for: space) }
        store.waitUntilClosed()
        let backup = try store.files()
        do { try store.open().set(Fixture.credential("alice", "new-password"), for: space) }
        try restore(backup)

        // The old copy is consistent in itself: its seal matches its rows. Only the anchor, kept
        // outside the store's folder, knows a newer generation was seen.
        expectError(.tamperDetected) { try store.open() }
        expectError(.tamperDetected) { try store.open(integrityCheck: .onOpen) }
        let withoutAnchor = try CredentialStorage(at: store.databaseURL, key: .keyFile(store.keyFileURL), rollbackAnchor: .none)
        #expect(try withoutAnchor.defaultCredential(for: space)?.password == "old-password",
                "the residual risk: without an anchor, a rolled-back store opens")
    }

    @Test func aBackupRestoredOnPurposeOpensOnceItsAnchorIsRemoved() throws {
        do { try store.open().set(Fixture.credential("alice", "a1"), for: space) }
        store.waitUntilClosed()
        let backup = try store.files()
        do { try store.open().set(Fixture.credential("bob", "b1"), for: space) }
        try restore(backup)
        do {
            _ = try store.open()
            Issue.record("a rolled-back store opened")
        } catch let error as CredentialStorageError {
            #expect(error.code == .tamperDetected)
            // The message names the anchor to delete.
            // (Beside it, the record of which store is at this path, `path-…`.)
            let anchors = try FileManager.default.contentsOfDirectory(atPath: store.anchorDirectory.path).filter { !$0.hasPrefix("path-") }
            #expect(anchors.count == 1)
            #expect(error.message.contains(anchors[0]))
            try FileManager.default.removeItem(at: store.anchorDirectory.appendingPathComponent(anchors[0]))
        }
        let reopened = try store.open()
        #expect(try reopened.credentials(for: space).keys.sorted() == ["alice"])
        // And from there the anchor follows the restored store's own history.
        try reopened.set(Fixture.credential("carol", "c1"), for: space)
        #expect(try store.open().credentials(for: space).count == 2)
    }

    @Test func anAnchorDeletedWhileTheStoreIsOpenIsWrittenAgainByTheNextCommit() throws {
        do { try store.open().set(Fixture.credential("alice", "a1"), for: space) }
        store.waitUntilClosed()
        let backup = try store.files()
        do {
            // The open store keeps the anchor open; deleted under it, the next commit writes a new one.
            let storage = try store.open()
            let anchors = try FileManager.default.contentsOfDirectory(atPath: store.anchorDirectory.path).filter { !$0.hasPrefix("path-") }
            try FileManager.default.removeItem(at: store.anchorDirectory.appendingPathComponent(anchors[0]))
            try storage.set(Fixture.credential("bob", "b1"), for: space)
            let recorded = try String(contentsOf: store.anchorDirectory.appendingPathComponent(anchors[0]), encoding: .utf8)
            let generation = try store.rawDatabase().read { try Int64.fetchOne($0, sql: "SELECT generation FROM store_seal") }
            #expect(Int64(recorded.trimmingCharacters(in: .whitespacesAndNewlines)) == generation)
        }
        // So a rollback to before that commit is still caught.
        try restore(backup)
        expectError(.tamperDetected) { try store.open() }
    }

    @Test func theAnchorFollowsEveryKindOfWriteAndNeverRefusesASoundStore() throws {
        do {
            let storage = try store.open()
            for index in 0..<5 { try storage.set(Fixture.credential("user\(index)"), for: space) }
            try storage.maintenance.rekey()
            try storage.sync.trust(try TemporaryStore().open().sync.deviceKey)
        }
        // Another instance writing too, and many reopenings.
        for round in 0..<3 {
            let first = try store.open()
            let second = try store.open()
            try first.set(Fixture.credential("first\(round)"), for: space)
            try second.set(Fixture.credential("second\(round)"), for: space)
        }
        let anchors = try FileManager.default.contentsOfDirectory(atPath: store.anchorDirectory.path).filter { !$0.hasPrefix("path-") }
        let recorded = try String(contentsOf: store.anchorDirectory.appendingPathComponent(anchors[0]), encoding: .utf8)
        let generation = try store.rawDatabase().read { try Int64.fetchOne($0, sql: "SELECT generation FROM store_seal") }
        #expect(Int64(recorded.trimmingCharacters(in: .whitespacesAndNewlines)) == generation)
        #expect(try store.open().credentials(for: space).count == 11)
    }
}
