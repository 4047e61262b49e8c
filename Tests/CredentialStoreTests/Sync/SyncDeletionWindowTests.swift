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

    @Test func aMachineBackAfter200DaysGetsWhatWasDeletedMeanwhileAndKeepsItsNewCredentials() throws {
        let (peers, clocks) = try fleet([0, 0])
        let (a, b) = (peers[0], peers[1])
        try a.storage.set(sync("keeper", "k"), for: space)
        try a.storage.set(sync("bob", "b"), for: space)
        #expect(try b.storage.sync.importBundle(from: a.export(to: [b])) == ImportReport(added: 2))
        try a.storage.sync.importBundle(from: b.export(to: [a]))

        // B goes offline; A removes bob, and keeps syncing while B is away (its bundle carries
        // the removal from the next day; B has not merged it, so A keeps it however long B is away).
        advance(clocks, by: 5)
        try a.storage.remove(user: "bob", for: space, options: .removeSynchronizable)
        advance(clocks, by: day)
        _ = try a.export(to: [b])
        advance(clocks, by: 99 * day)
        try b.storage.set(sync("made-offline", "m"), for: space)
        advance(clocks, by: 100 * day)

        // 200 days on, A still holds the removal. B merges A's fresh bundle, then A merges B's.
        let fromB = try b.storage.sync.importBundle(from: a.export(to: [b]))
        #expect(fromB.removed == 1 && fromB.dropped.isEmpty, "bob's removal reaches B as any removal does: \(fromB)")
        #expect(try b.storage.credentials(for: space).keys.sorted() == ["keeper", "made-offline"])
        let fromA = try a.storage.sync.importBundle(from: b.export(to: [a]))
        #expect(fromA.added == 1, "only what B made while offline arrives: \(fromA)")
        #expect(try a.storage.credentials(for: space).keys.sorted() == ["keeper", "made-offline"])

        // Later rounds change nothing: the deletion stays.
        for (peer, from) in [(b, a), (a, b), (b, a)] {
            let report = try peer.storage.sync.importBundle(from: from.export(to: [peer]))
            #expect(report.added == 0 && report.updated == 0 && report.removed == 0, "\(report)")
        }
        for peer in [a, b] { #expect(try peer.storage.credentials(for: space).keys.sorted() == ["keeper", "made-offline"]) }
    }

    /// B removes bob while offline, and comes back 200 days later, after A and C went on syncing
    /// with bob: the removal, which no bundle has carried yet, is not forgotten meanwhile, and it
    /// reaches A and C, where bob stays deleted however the later rounds go.
    @Test func aRemovalMadeOfflineLeavesItsStoreHoweverLongItWasAway() throws {
        let (peers, clocks) = try fleet([0, 0, 0])
        let (a, b, c) = (peers[0], peers[1], peers[2])
        try a.storage.set(sync("keeper", "k"), for: space)
        try a.storage.set(sync("bob", "b"), for: space)
        for peer in [b, c] { try peer.storage.sync.importBundle(from: a.export(to: [b, c])) }

        advance(clocks, by: 5)
        try b.storage.remove(user: "bob", for: space, options: .removeSynchronizable)
        for _ in 0..<4 {
            advance(clocks, by: 50 * day)
            try c.storage.sync.importBundle(from: a.export(to: [b, c]))
            try a.storage.sync.importBundle(from: c.export(to: [a, b]))
        }

        // 200 days on, B syncs: what A carries does not bring bob back, and B's removal leaves.
        let back = try b.storage.sync.importBundle(from: a.export(to: [b, c]))
        #expect(back.added == 0 && back.dropped.isEmpty, "\(back)")
        let fromB = try b.export(to: [a, c])
        #expect(try a.storage.sync.importBundle(from: fromB).removed == 1)
        #expect(try c.storage.sync.importBundle(from: a.export(to: [b, c])).removed == 1)
        for _ in 0..<2 {
            advance(clocks, by: 100 * day)
            for (peer, from) in [(a, c), (c, b), (b, a), (a, b), (c, a)] {
                let report = try peer.storage.sync.importBundle(from: from.export(to: peers.filter { $0 !== from }))
                #expect(report.added == 0, "\(report)")
            }
        }
        for peer in peers { #expect(try peer.storage.credentials(for: space).keys.sorted() == ["keeper"]) }
    }

    /// B removed bob and stopped trusting A, which was away; 190 days later B had forgotten the
    /// removal (no trusted device was left to hold it for), and trusts A again when it returns.
    /// B, stale with respect to A, refuses bob when A's bundle brings it. The refusal holds on B's
    /// next merge of the same bundle (it is no longer stale then), and it travels: A, which kept
    /// bob, deletes it too.
    @Test func aStaleStoresRefusalHoldsOnItsNextMergeAndReachesTheStoreThatKeptTheCredential() throws {
        let (peers, clocks) = try fleet([0, 0])
        let (a, b) = (peers[0], peers[1])
        try a.storage.set(sync("keeper", "k"), for: space)
        try a.storage.set(sync("bob", "b"), for: space)
        try b.storage.sync.importBundle(from: a.export(to: [b]))
        try a.storage.sync.importBundle(from: b.export(to: [a]))

        advance(clocks, by: 5)
        try b.storage.remove(user: "bob", for: space, options: .removeSynchronizable)
        try b.storage.sync.untrust(try a.publicKey)
        _ = try b.export(to: [b])
        advance(clocks, by: 190 * day)
        _ = try b.export(to: [b])
        try b.storage.sync.trust(try a.publicKey)

        let fromA = try a.export(to: [b])
        let first = try b.storage.sync.importBundle(from: fromA)
        #expect(first.dropped == [DroppedCredential(space: space, user: "bob")], "\(first)")
        let second = try b.storage.sync.importBundle(from: fromA)
        #expect(second.added == 0, "the refusal holds once B is no longer stale: \(second)")
        #expect(try b.storage.credentials(for: space)["bob"] == nil)

        #expect(try a.storage.sync.importBundle(from: b.export(to: [a])).removed == 1, "A kept bob, and B's refusal reaches it")
        for _ in 0..<2 {
            advance(clocks, by: 100 * day)
            for (peer, from) in [(a, b), (b, a)] {
                let report = try peer.storage.sync.importBundle(from: from.export(to: peers.filter { $0 !== from }))
                #expect(report.added == 0, "\(report)")
            }
        }
        for peer in peers { #expect(try peer.storage.credentials(for: space).keys.sorted() == ["keeper"]) }
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
        for peer in [x, b, c] { try peer.storage.sync.importBundle(from: first) }
        // Days later (B's hybrid clock no longer carries A's reading), X syncs once and goes
        // offline; its bundle stays in the folder.
        advance(clocks, by: 10 * day)
        let fromX = try x.export(to: peers)
        advance(clocks, by: 60_000)
        try b.storage.remove(user: "bob", for: space, options: .removeSynchronizable)
        let deletion = try b.export(to: peers)
        for peer in [a, c] { #expect(try peer.storage.sync.importBundle(from: deletion).removed == 1) }

        advance(clocks, by: laterHours * hour)
        for peer in [a, b, c] {
            // X's last bundle is either refused as too old or brings nothing back.
            let report = try? peer.storage.sync.importBundle(from: fromX)
            #expect((report?.added ?? 0) == 0, "bob came back: \(String(describing: report))")
            #expect(try peer.storage.credentials(for: space)["bob"] == nil)
        }
    }
}
