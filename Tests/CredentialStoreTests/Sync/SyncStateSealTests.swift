import Foundation
import GRDB
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// The sync state (registers, sync defaults, clock, device identity) was
/// outside the table seal, and a merge took a missing local register for "older than anything".
/// Deleting registers with plain SQL then let an older bundle bring back an old password or a
/// removed credential. Now every export, import and listing refuses the deletion (they check every
/// row against the seal), `verify()` reports it, and a store opened before it refuses to merge over the gap.
@Suite struct SyncStateSealTests {
    let laptop: SyncPeer
    let desktop: SyncPeer
    let space = Fixture.space(realm: "API")
    /// Both machines' clock: a later change is made later by moving it, not by sleeping.
    let clock = TestClock()

    init() throws {
        laptop = try SyncPeer(clock: clock)
        desktop = try SyncPeer(clock: clock)
        try trust([laptop, desktop], [laptop, desktop])
    }


    /// Plain SQL on the store's file, as someone with write access to its folder and no key runs
    /// it (the store may be open in another process meanwhile).
    private func attack(_ peer: SyncPeer, _ sql: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        try DatabaseQueue(path: peer.folder.databaseURL.path, configuration: configuration).write { try $0.execute(sql: sql) }
    }

    /// Opening checks only the seal's MAC; an export, a listing and (in the tests) an import read
    /// the whole sync state and refuse it; verify reports it.
    private func expectRefused(_ peer: SyncPeer, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let storage = try peer.folder.open()
        expectError(.tamperDetected, sourceLocation: sourceLocation) {
            try storage.sync.export(to: peer.file("refused.csbundle"), protection: .recipients([try peer.publicKey]))
        }
        expectError(.tamperDetected, sourceLocation: sourceLocation) { try storage.entries() }
        let report = try peer.folder.open(integrityCheck: .deferredToVerify).maintenance.verify()
        #expect(!report.isSound && report.authenticationFailures > 0, "\(report.problems)", sourceLocation: sourceLocation)
    }

    @Test func deletedRegistersOfLiveItemsAreRefusedAndAnOlderPasswordNeverComesBack() throws {
        let a = laptop.storage, b = desktop.storage
        try a.set(sync("alice", "old-password"), for: space)
        try desktop.storage.sync.importBundle(from: try laptop.export(to: [desktop]))
        let stale = try desktop.export(to: [laptop, desktop])
        clock.advance(by: 5)
        try a.set(sync("alice", "new-password"), for: space)
        let newest = try laptop.export(to: [desktop])

        try attack(laptop, "DELETE FROM sync_items")
        try expectRefused(laptop)
        // The instance opened before the deletion does not merge over it either.
        expectError(.tamperDetected) { try a.sync.importBundle(from: stale) }
        expectError(.tamperDetected) { try a.sync.export(to: laptop.file("out.csbundle"), protection: .recipients([try desktop.publicKey])) }
        #expect(try a.credentials(for: space)["alice"]?.password == "new-password")
        // Nor does a one-lookup open, which checks rows but not the whole set.
        let quick = try laptop.folder.open(integrityCheck: .onOpen)
        expectError(.tamperDetected) { try quick.sync.importBundle(from: stale) }
        #expect(try quick.defaultCredential(for: space)?.password == "new-password")

        // The other machine still gets the newest value from the bundle written before the attack.
        try b.sync.importBundle(from: newest)
        #expect(try b.credentials(for: space)["alice"]?.password == "new-password")
        try b.sync.importBundle(from: stale)
        #expect(try b.credentials(for: space)["alice"]?.password == "new-password")
    }

    @Test func deletedTombstonesAreRefusedAndARemovedCredentialNeverComesBack() throws {
        let a = laptop.storage
        try a.set(sync("keeper", "k"), for: space)
        try a.set(sync("bob", "b"), for: space)
        try desktop.storage.sync.importBundle(from: try laptop.export(to: [desktop]))
        let stale = try desktop.export(to: [laptop])
        clock.advance(by: 5)
        try a.remove(user: "bob", for: space, options: .removeSynchronizable)

        try attack(laptop, "DELETE FROM sync_items WHERE deleted = 1")
        try expectRefused(laptop)
        // Replaying the older bundle is refused by the import's check of every row.
        expectError(.tamperDetected) { try laptop.folder.open().sync.importBundle(from: stale) }
        #expect(try laptop.folder.open(integrityCheck: .onOpen).credentials(for: space).keys.sorted() == ["keeper"])
    }

    @Test func aRegisterWithoutItsCredentialIsRefusedByTheMerge() throws {
        let a = laptop.storage
        try a.set(sync("alice", "pw"), for: space)
        let stale = try laptop.export(to: [laptop])
        // The credential row gone, its live register left (the seal sees this too).
        try attack(laptop, "DELETE FROM credentials")
        try expectRefused(laptop)
        expectError(.tamperDetected) { try a.sync.importBundle(from: stale) }
    }

    @Test(arguments: [
        "UPDATE sync_clock SET counter = counter + 1",
        "UPDATE sync_clock SET wall = wall - 1000",
        "DELETE FROM sync_clock",
        "DELETE FROM sync_defaults",
        "DELETE FROM device_identity",
        "UPDATE sync_items SET wall = wall + 1",
    ])
    func everyPartOfTheSyncStateIsUnderTheSeal(edit: String) throws {
        let a = laptop.storage
        try a.set(sync("alice", "pw"), for: space)
        try a.set(sync("bob", "pw"), for: space)
        try a.setDefaultCredential(sync("bob", "pw"), for: space)
        try attack(laptop, edit)
        try expectRefused(laptop)
        if edit.contains("device_identity") || edit.contains("sync_clock") {
            // The identity is never silently made anew over a deleted one.
            expectError(.tamperDetected) { try laptop.folder.open().sync.deviceKey }
        }
    }

    @Test func theSealFollowsEverySyncWrite() throws {
        let a = laptop.storage, b = desktop.storage
        try a.set(sync("alice", "a1"), for: space)
        try a.set(sync("bob", "b1"), for: space)
        try a.setDefaultCredential(sync("bob", "b1"), for: space)
        try b.sync.importBundle(from: try laptop.export(to: [desktop]))
        try b.set(sync("alice", "a2"), for: space)
        try b.remove(user: "bob", for: space, options: .removeSynchronizable)
        try a.sync.importBundle(from: try desktop.export(to: [laptop]))
        try a.maintenance.rekey()
        try a.set(Fixture.credential("alice", "now-permanent"), for: space, options: .removeSynchronizable)
        for peer in [laptop, desktop] {
            #expect(throws: Never.self) { try peer.folder.open() }
            #expect(try peer.folder.open().maintenance.verify().isSound)
        }
        // A device identity made on first need, in its own transaction, is folded in too.
        let fresh = try TemporaryStore()
        _ = try fresh.open().sync.deviceID
        #expect(throws: Never.self) { try fresh.open() }
    }
}
