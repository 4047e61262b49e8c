import Foundation
import GRDB
import Logging
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreTestSupport

/// A search by label or attribute is served from the tag rows (`credential_tags`): every write
/// keeps a credential's tags exact, the seal tree groups them by tag, so a search proves that it
/// found every credential carrying its tag and none more, and a tag row deleted, added or put back
/// outside credstore is `tamperDetected` where it is read and by `verify()`.
@Suite struct CredentialTagTests {
    let store: TemporaryStore
    let work = Fixture.space("work.example.com")
    let home = Fixture.space("home.example.com")
    let elsewhere = Fixture.space("elsewhere.example.com")

    init() throws {
        store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(Credential(user: "alice", password: "a", label: "work", attributes: ["team": "infra", "env": "prod"]), for: work)
        try storage.set(Credential(user: "bob", password: "b", label: "work", attributes: ["team": "web"]), for: work)
        try storage.set(Credential(user: "carol", password: "c", label: "home", attributes: ["env": "prod"]), for: home)
        try storage.set(Credential(user: "zoe", password: "z"), for: elsewhere)
    }

    private func users(_ storage: CredentialStorage, label: String? = nil, _ attributes: [String: String] = [:],
                       persistence: Persistence? = nil) throws -> Set<String> {
        var query = CredentialQuery(label: label, attributes: attributes)
        query.persistence = persistence
        return Set(try storage.entries(matching: query).map(\.user))
    }

    private func tagRowCount() throws -> Int {
        try store.rawDatabase().read { try Int.fetchOne($0, sql: "SELECT count(*) FROM credential_tags") ?? 0 }
    }

    private func edit(_ body: (Database) throws -> Void) throws {
        try store.rawDatabase().writeWithoutTransaction(body)
    }

    /// The tag rows of `user`'s credential in `space`, as stored.
    private func tagRows(of user: String, in space: ProtectionSpace, _ database: DatabaseQueue? = nil) throws -> [Row] {
        let storage = try store.open()
        let spaceIndex = storage.keys.spaceIndex(space)
        let userIndex = storage.keys.userIndex(spaceIndex: spaceIndex, user: user)
        return try (database ?? store.rawDatabase()).read {
            try Row.fetchAll($0, sql: "SELECT * FROM credential_tags WHERE space_index = ? AND user_index = ?",
                             arguments: [Data(spaceIndex.bytes), Data(userIndex.bytes)])
        }
    }

    private func insert(_ row: Row, _ db: Database) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO credential_tags (tag_index, space_index, user_index) VALUES (?, ?, ?)",
                       arguments: [row["tag_index"] as Data, row["space_index"] as Data, row["user_index"] as Data])
    }

    /// The search refuses, a listing refuses, and verify reports the seal.
    private func expectDetected(by search: CredentialQuery?, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let storage = try store.open()
        if let search {
            expectError(.tamperDetected, sourceLocation: sourceLocation) { try storage.entries(matching: search) }
        }
        expectError(.tamperDetected, sourceLocation: sourceLocation) { try storage.entries() }
        let report = try store.open(integrityCheck: .deferredToVerify).maintenance.verify()
        #expect(!report.isSound, sourceLocation: sourceLocation)
        #expect(report.problems.contains { $0.contains("seal") }, "\(report.problems)", sourceLocation: sourceLocation)
    }

    // MARK: Answers

    @Test func aSearchFindsExactlyTheCredentialsThatMeetEveryCondition() throws {
        let storage = try store.open()
        #expect(try users(storage, label: "work") == ["alice", "bob"])
        #expect(try users(storage, label: "work", ["team": "infra"]) == ["alice"])
        #expect(try users(storage, ["env": "prod"]) == ["alice", "carol"])
        #expect(try users(storage, ["env": "prod", "team": "infra"]) == ["alice"])
        #expect(try users(storage, label: "home", ["team": "infra"]).isEmpty)
        #expect(try users(storage, label: "work", persistence: .synchronizable).isEmpty)
        // The tier that keeps nothing selects nothing, spelled as a caller would spell it.
        #expect(try storage.entries(matching: CredentialQuery(persistence: .none)).isEmpty)
        #expect(try storage.entries(matching: CredentialQuery(persistence: .permanent)).count == 4)
        #expect(try users(storage, label: "nobody's").isEmpty)
        #expect(try users(storage, ["team": "infr"]).isEmpty, "a value matches whole, not as a prefix")
        // The same answers as a scan of every entry.
        let now = Date()
        for query in [CredentialQuery(label: "work"), CredentialQuery(attributes: ["env": "prod"]), CredentialQuery(label: "home", attributes: ["env": "prod"])] {
            #expect(try storage.entries(matching: query) == (try storage.entries().filter { query.matches($0, now: now) }))
        }
        // Two spellings Swift calls equal are one label.
        try storage.set(Credential(user: "dave", password: "d", label: "caf\u{E9}"), for: home)
        #expect(try users(storage, label: "cafe\u{301}") == ["dave"])
        #expect(try storage.maintenance.verify().isSound)
    }

    @Test func everyWriteKeepsTheTagsExact() throws {
        let storage = try store.open()
        // Relabelled: the old label's tag goes, the new one comes; the attribute, not named, stays.
        try storage.set(Credential(user: "alice", password: "a2", label: "personal"), for: work)
        #expect(try users(storage, label: "work") == ["bob"])
        #expect(try users(storage, label: "personal") == ["alice"])
        #expect(try users(storage, ["team": "infra"]) == ["alice"])
        // The attribute removed: its tag goes.
        try storage.update(user: "alice", for: work) { $0.attributes = [:] }
        #expect(try users(storage, ["team": "infra"]).isEmpty)
        // Removed.
        _ = try storage.remove(user: "bob", for: work)
        #expect(try users(storage, label: "work").isEmpty)
        // Moved to the session tier: found in memory, never tagged on disk.
        try storage.set(Credential(user: "carol", password: "c", persistence: .forSession, label: "home"), for: home)
        #expect(try users(storage, label: "home") == ["carol"])
        #expect(try tagRows(of: "carol", in: home).isEmpty)
        // Moved to the synchronizable tier, and written in a batch.
        try storage.set(Credential(user: "alice", password: "a3", persistence: .synchronizable, label: "personal"), for: work)
        #expect(try users(storage, label: "personal", persistence: .synchronizable) == ["alice"])
        _ = try storage.setAll([
            (elsewhere, Credential(user: "zoe", password: "z2", label: "batch")),
            (home, Credential(user: "erin", password: "e", label: "batch", attributes: ["env": "dev"])),
        ], replacingDifferent: true, dryRun: false)
        #expect(try users(storage, label: "batch") == ["zoe", "erin"])
        #expect(try users(storage, ["env": "dev"]) == ["erin"])
        // Every tag row on disk is a credential's: alice (1), zoe (1), erin (2).
        #expect(try tagRowCount() == 4)
        #expect(try storage.maintenance.verify().isSound)
    }

    @Test func aSyncImportKeepsTheTagsExact() throws {
        let (sender, receiver) = (try SyncPeer(), try SyncPeer())
        try trust([sender, receiver], [sender, receiver])
        try sender.storage.set(Credential(user: "sam", password: "s", persistence: .synchronizable, label: "shared"), for: work)
        try receiver.storage.sync.importBundle(from: try sender.export(to: [receiver]))
        #expect(try users(receiver.storage, label: "shared") == ["sam"])
        try sender.storage.set(Credential(user: "sam", password: "s2", persistence: .synchronizable, label: "moved"), for: work)
        try receiver.storage.sync.importBundle(from: try sender.export(to: [receiver]))
        #expect(try users(receiver.storage, label: "shared").isEmpty)
        #expect(try users(receiver.storage, label: "moved") == ["sam"])
        _ = try sender.storage.remove(user: "sam", for: work, options: .removeSynchronizable)
        try receiver.storage.sync.importBundle(from: try sender.export(to: [receiver]))
        #expect(try users(receiver.storage, label: "moved").isEmpty)
        #expect(try receiver.storage.maintenance.verify().isSound)
    }

    @Test func aRekeyedStoreIsSearchedUnderItsNewIndexesAndKeepsNoOldTag() throws {
        let before = try store.rawDatabase().read { try Set(Data.fetchAll($0, sql: "SELECT tag_index FROM credential_tags")) }
        do { try store.open().maintenance.rekey() }
        let after = try store.rawDatabase().read { try Set(Data.fetchAll($0, sql: "SELECT tag_index FROM credential_tags")) }
        #expect(after.count == before.count)
        #expect(after.isDisjoint(with: before))
        let storage = try store.open()
        #expect(try users(storage, label: "work", ["team": "web"]) == ["bob"])
        #expect(try users(storage, ["env": "prod"]) == ["alice", "carol"])
        #expect(try storage.maintenance.verify().isSound)
    }

    // MARK: Tampering

    @Test func aDeletedTagRowIsDetected() throws {
        let row = try #require(try tagRows(of: "bob", in: work).first)
        try edit { db in
            try db.execute(sql: "DELETE FROM credential_tags WHERE tag_index = ? AND space_index = ? AND user_index = ?",
                           arguments: [row["tag_index"] as Data, row["space_index"] as Data, row["user_index"] as Data])
        }
        // Whichever of bob's tags it was, one of these searches reads its leaf.
        let storage = try store.open()
        expectError(.tamperDetected) {
            _ = try storage.entries(matching: CredentialQuery(label: "work"))
            _ = try storage.entries(matching: CredentialQuery(attributes: ["team": "web"]))
        }
        try expectDetected(by: nil)
    }

    @Test func anInjectedTagRowIsDetected() throws {
        // Zoe's credential given the "work" label's tag: a search for "work" would consider her.
        let keys = try store.open().keys
        let label = keys.tagIndex(label: "work")
        let zoe = keys.spaceIndex(elsewhere)
        try edit { db in
            try db.execute(sql: "INSERT INTO credential_tags (tag_index, space_index, user_index) VALUES (?, ?, ?)",
                           arguments: [Data(label.bytes), Data(zoe.bytes), Data(keys.userIndex(spaceIndex: zoe, user: "zoe").bytes)])
        }
        try expectDetected(by: CredentialQuery(label: "work"))
    }

    @Test func aTagRowPutBackFromAnOlderCopyIsDetected() throws {
        let old = try tagRows(of: "alice", in: work)
        do { try store.open().set(Credential(user: "alice", password: "a2", label: "personal"), for: work) }
        try edit { db in for row in old { try insert(row, db) } }
        try expectDetected(by: CredentialQuery(label: "work"))
    }

    @Test func aTagRowCopiedInFromAnotherStoreIsDetected() throws {
        let other = try TemporaryStore()
        try other.open().set(Credential(user: "mallory", password: "m", label: "work"), for: work)
        let foreign = try other.rawDatabase().read { try Row.fetchAll($0, sql: "SELECT * FROM credential_tags") }
        try edit { db in for row in foreign { try insert(row, db) } }
        // Under the other store's keys it is no tag of this store: no search reads it, and the
        // searches answer as before, but a listing and verify refuse it.
        #expect(try users(store.open(), label: "work") == ["alice", "bob"])
        try expectDetected(by: nil)
    }

    @Test func verifyReportsSealedTagsThatAreNotTheCredentials() throws {
        // Only a writer with the keys can seal a wrong tag (a bug): alice's tags dropped, through
        // the write pipeline, so the seal holds and only the comparison with her details sees it.
        do {
            let storage = try store.open()
            let pipeline = storage.makePipeline(keys: storage.keys)
            let spaceIndex = storage.keys.spaceIndex(work)
            try storage.repository.write(observer: pipeline) { writer in
                try writer.replaceTags(space: spaceIndex, user: storage.keys.userIndex(spaceIndex: spaceIndex, user: "alice"), with: [])
                try pipeline.foldSeal(into: writer)
            }
        }
        let report = try store.open().maintenance.verify()
        #expect(!report.isSound)
        #expect(report.problems.contains { $0.contains("search tags differ") && $0.contains("3 missing") }, "\(report.problems)")
    }

    // MARK: Migration

    @Test func migration0010TagsTheCredentialsOfAStoreWithDetails() throws {
        let old = try TemporaryStore()
        do {
            let opened = try StoreOpener.open(
                databaseURL: old.databaseURL, key: .keyFile(old.keyFileURL), logger: Logger(label: "test"),
                migrateUpTo: "0009_credential_details")
            let keys = opened.keys
            let pipeline = WritePipeline(keys: keys, storeID: opened.header.storeID, clock: SystemClock())
            try opened.repository.write(observer: pipeline) { writer in
                for (user, label, attributes) in [("alice", "work", ["team": "infra"]), ("bob", "work", [:]), ("carol", nil, ["team": "infra"])] {
                    let space = Fixture.space("\(user).example.com")
                    try writer.upsert(keys.encrypt(
                        Credential(user: user, password: "pw", label: label, attributes: attributes),
                        in: space, spaceIndex: keys.spaceIndex(space), created: 1, modified: 1))
                }
                try pipeline.foldSeal(into: writer)
            }
            #expect(try old.rawDatabase().read { try $0.tableExists("credential_tags") } == false)
        }
        old.waitUntilClosed()
        let storage = try old.open()
        #expect(Set(try storage.entries(matching: CredentialQuery(label: "work")).map(\.user)) == ["alice", "bob"])
        #expect(Set(try storage.entries(matching: CredentialQuery(attributes: ["team": "infra"])).map(\.user)) == ["alice", "carol"])
        #expect(try old.rawDatabase().read { try Int.fetchOne($0, sql: "SELECT count(*) FROM credential_tags") } == 4)
        #expect(try storage.maintenance.verify().isSound)
    }
}
