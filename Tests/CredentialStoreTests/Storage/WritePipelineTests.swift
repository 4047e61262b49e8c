import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// The write pipeline: the persistence layer reports the rows a write changes, and the pipeline
/// (not the SQL) keeps the seal, the change log and the sync registers in step with them.
@Suite struct WritePipelineTests {
    let space = Fixture.space()

    @Test func aWriteThatChangesSealedRowsWithoutFoldingTheSealIsRolledBack() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "a"), for: space)
        let keys = storage.keys
        let pipeline = WritePipeline(keys: keys, storeID: storage.header.storeID, clock: SystemClock())
        expectError(.io) {
            try storage.repository.write(observer: pipeline) { writer in
                try writer.upsert(keys.encrypt(
                    Fixture.credential("bob", "b"), in: space, spaceIndex: keys.spaceIndex(space), created: 1, modified: 1))
            }
        }
        #expect(try storage.credentials(for: space).keys.sorted() == ["alice"], "the unsealed row was not kept")
        #expect(try storage.maintenance.verify().isSound)
        #expect(throws: Never.self) { try store.open() }
    }

    @Test func aDryRunReturnsItsReportAndLeavesEveryTableAsItWas() throws {
        let laptop = try SyncPeer(), desktop = try SyncPeer()
        try trust([laptop, desktop], [laptop, desktop])
        try laptop.storage.set(sync("alice", "a"), for: space)
        let bundle = try laptop.export(to: [desktop])
        let before = try StoreSnapshot(desktop.storage)
        let position = try desktop.storage.repository.read { try $0.changeLogPosition() }
        let seal = try desktop.storage.repository.read { try $0.tableSeal() }

        #expect(try desktop.storage.sync.importBundle(from: bundle, dryRun: true) == ImportReport(added: 1))
        #expect(try StoreSnapshot(desktop.storage) == before, "registers, clock and trusted devices untouched")
        #expect(try desktop.storage.repository.read { try $0.changeLogPosition() } == position, "nothing logged")
        #expect(try desktop.storage.repository.read { try $0.tableSeal() } == seal, "the seal not moved on")
        #expect(try desktop.storage.credentials(for: space).isEmpty)
        #expect(try desktop.storage.sync.importBundle(from: bundle) == ImportReport(added: 1))
    }

    @Test func aLocalWriteKeepsItsSyncRegisterFromTheRowItWrote() throws {
        let store = try TemporaryStore()
        let clock = TestClock()
        let storage = try store.open(clock: clock)
        try storage.set(sync("alice", "a"), for: space)
        let live = try #require(try syncRegister(storage, space, "alice"))
        #expect(!live.deleted)
        #expect(live.stamp.wall == clock.now())
        clock.advance(by: 1000)
        // Leaving the synchronizable tier makes the register a tombstone, stamped later.
        try storage.set(Fixture.credential("alice", "a", .permanent), for: space, options: .removeSynchronizable)
        let tombstone = try #require(try syncRegister(storage, space, "alice"))
        #expect(tombstone.deleted)
        #expect(tombstone.stamp.wall == clock.now())
        // A credential outside sync gets no register.
        try storage.set(Fixture.credential("bob", "b", .permanent), for: space, options: .removeSynchronizable)
        #expect(try syncRegister(storage, space, "bob") == nil)
        #expect(try storage.maintenance.verify().isSound)
    }
}
