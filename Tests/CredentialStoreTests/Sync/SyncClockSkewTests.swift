import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreTestSupport

/// The clock-skew rule is judged per writer: a machine whose clock is right is never refused, or
/// blamed, for a reading it relayed from a machine whose clock is ahead (docs/sync-format.md,
/// "Windows and margins").
@Suite struct SyncClockSkewTests {
    let space = Fixture.space(realm: "API")
    let hour: Int64 = 3600 * 1000

    /// A (right), B (2 hours slow) and C (23 hours fast), trusting each other.
    let a: SyncPeer, b: SyncPeer, c: SyncPeer
    let clocks: [TestClock]

    init() throws {
        let start = nowMillis()
        clocks = [TestClock(startingAt: start), TestClock(startingAt: start - 2 * 3600 * 1000), TestClock(startingAt: start + 23 * 3600 * 1000)]
        a = try SyncPeer(clock: clocks[0])
        b = try SyncPeer(clock: clocks[1])
        c = try SyncPeer(clock: clocks[2])
        try trust([a, b, c], [a, b, c])
    }

    @Test func aRelayedReadingFromAFastClockIsHeldBackAndTheRestMerges() throws {
        try c.storage.set(sync("from-c", "c"), for: space)
        try a.storage.sync.importBundle(from: c.export(to: [a]))
        try a.storage.set(sync("from-a", "a"), for: space)
        try b.storage.set(sync("from-b", "b"), for: space)

        // A's bundle carries C's reading, and that of A's own change made after it, which A's
        // clock stamped past C's: both are held back, A's bundle is not refused, and only C is named.
        let relayed = try a.export(to: [b])
        let report = try b.storage.sync.importBundle(from: relayed)
        #expect(report.heldBack == 2 && report.added == 0, "\(report)")
        #expect(report.clocksAhead == [try c.storage.sync.deviceID], "the machine whose clock is ahead is named, not A")
        #expect(try b.storage.credentials(for: space).keys.sorted() == ["from-b"])

        // B's own edits still travel to A.
        #expect(try a.storage.sync.importBundle(from: b.export(to: [a])).added == 1)

        // Once the clocks agree within the rule, the held-back changes merge.
        for clock in clocks { clock.advance(by: 2 * hour) }
        let later = try b.storage.sync.importBundle(from: relayed)
        #expect(later.added == 2 && later.heldBack == 0, "\(later)")
        #expect(try b.storage.credentials(for: space).keys.sorted() == ["from-a", "from-b", "from-c"])
    }

    @Test func aBundleFromAFastClockIsRefusedNamingThatMachine() throws {
        try c.storage.set(sync("from-c", "c"), for: space)
        let bundle = try c.export(to: [b])
        let error = #expect(throws: CredentialStorageError.self) { try b.storage.sync.importBundle(from: bundle) }
        #expect(error?.code == .invalidBundle)
        #expect(error?.message.contains(try c.storage.sync.deviceID) == true, "\(String(describing: error))")
        #expect(error?.message.contains(try a.storage.sync.deviceID) == false)
    }

    @Test func aBundleIsNotRefusedForItsCreationTimeWhenItsChangesAreWithinTheRule() throws {
        // C relays A's change: its bundle is created 25 hours ahead of B's clock, its change is not.
        try a.storage.set(sync("from-a", "a"), for: space)
        try c.storage.sync.importBundle(from: a.export(to: [c]))
        let report = try b.storage.sync.importBundle(from: c.export(to: [b]))
        #expect(report == ImportReport(added: 1))
        #expect(try b.storage.credentials(for: space)["from-a"]?.password == "a")
    }
}
