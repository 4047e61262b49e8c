import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreTestSupport

/// Deletions stay deleted: tombstones outlive every bundle that could still be accepted, whatever
/// the clocks within the allowed skew, and a store that has not merged a device for longer than
/// deletions are remembered neither keeps nor takes what that device may have deleted
/// (docs/sync-format.md, "Windows and margins" and "Stale devices").
@Suite struct SyncDeletionWindowTests {
    let space = Fixture.space(realm: "API")
    let hour: Int64 = 3600 * 1000
    let day = TestClock.day

    /// Machines with their own clocks, set `offsets` milliseconds from a common real time, all
    /// trusting each other.
    private func fleet(_ offsets: [Int64]) throws -> (peers: [SyncPeer], clocks: [TestClock]) {
        let start = nowMillis()
        let clocks = offsets.map { TestClock(startingAt: start + $0) }
        let peers = try clocks.map { try SyncPeer(clock: $0) }
        try trust(peers, peers)
        return (peers, clocks)
    }

    private func advance(_ clocks: [TestClock], by milliseconds: Int64) {
        for clock in clocks { clock.advance(by: milliseconds) }
    }

    @Test func aMachineBackAfter200DaysDropsWhatWasDeletedMeanwhileAndKeepsItsNewCredentials() throws {
        let (peers, clocks) = try fleet([0, 0])
        let (a, b) = (peers[0], peers[1])
        try a.storage.set(sync("keeper", "k"), for: space)
        try a.storage.set(sync("bob", "b"), for: space)
        #expect(try b.storage.importBundle(from: a.export(to: [b])) == ImportReport(added: 2))
        try a.storage.importBundle(from: b.export(to: [a]))

        // B goes offline; A removes bob, and keeps syncing while B is away.
        advance(clocks, by: 5)
        try a.storage.remove(Fixture.credential("bob"), for: space, options: .removeSynchronizable)
        advance(clocks, by: 100 * day)
        try b.storage.set(sync("made-offline", "m"), for: space)
        advance(clocks, by: 100 * day)

        // 200 days on: A's tombstone is gone. B merges A's fresh bundle, then A merges B's.
        let fromB = try b.storage.importBundle(from: a.export(to: [b]))
        #expect(fromB.dropped == [DroppedCredential(space: space, user: "bob")], "bob, which A may have deleted, is dropped: \(fromB)")
        #expect(try b.storage.credentials(for: space).keys.sorted() == ["keeper", "made-offline"])
        let fromA = try a.storage.importBundle(from: b.export(to: [a]))
        #expect(fromA.added == 1, "only what B made while offline arrives: \(fromA)")
        #expect(try a.storage.credentials(for: space).keys.sorted() == ["keeper", "made-offline"])

        // Later rounds change nothing: the deletion stays.
        #expect(try b.storage.importBundle(from: a.export(to: [b])) == ImportReport(unchanged: 2))
        #expect(try a.storage.importBundle(from: b.export(to: [a])) == ImportReport(unchanged: 2))
    }

    @Test func aMachineThatDeletedWhileOfflineDoesNotTakeTheCredentialBack() throws {
        let (peers, clocks) = try fleet([0, 0])
        let (a, b) = (peers[0], peers[1])
        try a.storage.set(sync("keeper", "k"), for: space)
        try a.storage.set(sync("bob", "b"), for: space)
        try b.storage.importBundle(from: a.export(to: [b]))
        try a.storage.importBundle(from: b.export(to: [a]))

        // B removes bob offline and returns after its own tombstone has expired.
        advance(clocks, by: 5)
        try b.storage.remove(Fixture.credential("bob"), for: space, options: .removeSynchronizable)
        advance(clocks, by: 200 * day)
        try b.storage.exportSynchronizable(to: b.file("expire.csbundle"), protection: .recipients([try b.publicKey]))
        let fromA = try a.export(to: [b])
        let report = try b.storage.importBundle(from: fromA)
        #expect(report.added == 0 && report.dropped == [DroppedCredential(space: space, user: "bob")], "\(report)")
        #expect(try b.storage.credentials(for: space)["bob"] == nil)
    }

    /// A credential removed by a machine 23 hours slow, and the last bundle of a machine that
    /// merged it before going offline: the tombstone must outlive that bundle's acceptance.
    @Test(arguments: [
        (writerOffsetHours: Int64(0), deleterOffsetHours: Int64(-23), laterHours: Int64(179 * 24 + 2)),
        (writerOffsetHours: Int64(23), deleterOffsetHours: Int64(0), laterHours: Int64(180 * 24 + 12)),
    ])
    func aDeletionOutlivesEveryBundleStillAcceptedWhateverTheClocksWithinTheSkew(
        writerOffsetHours: Int64, deleterOffsetHours: Int64, laterHours: Int64
    ) throws {
        // A (right), X (the writer that goes offline), B (the deleter), C (right).
        let (peers, clocks) = try fleet([0, writerOffsetHours * hour, deleterOffsetHours * hour, 0])
        let (a, x, b, c) = (peers[0], peers[1], peers[2], peers[3])
        try a.storage.set(sync("keeper", "k"), for: space)
        try a.storage.set(sync("bob", "b"), for: space)
        let first = try a.export(to: peers)
        for peer in [x, b, c] { try peer.storage.importBundle(from: first) }
        // Days later (B's hybrid clock no longer carries A's reading), X syncs once and goes
        // offline; its bundle stays in the folder.
        advance(clocks, by: 10 * day)
        let fromX = try x.export(to: peers)
        advance(clocks, by: 60_000)
        try b.storage.remove(Fixture.credential("bob"), for: space, options: .removeSynchronizable)
        let deletion = try b.export(to: peers)
        for peer in [a, c] { #expect(try peer.storage.importBundle(from: deletion).removed == 1) }

        advance(clocks, by: laterHours * hour)
        for peer in [a, b, c] {
            // X's last bundle is either refused as too old or brings nothing back.
            let report = try? peer.storage.importBundle(from: fromX)
            #expect((report?.added ?? 0) == 0, "bob came back: \(String(describing: report))")
            #expect(try peer.storage.credentials(for: space)["bob"] == nil)
        }
    }
}
