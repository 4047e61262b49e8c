import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// Concurrent edits of docs/sync-format.md ("Concurrent edits"): the local change that loses to
/// another machine's is reported, kept (sealed, never in a bundle, gone with the credential and
/// with the tombstone window) and can be restored, after which it wins everywhere.
@Suite struct SyncConflictTests {
    let space = Fixture.space(realm: "API")
    /// Each machine's own clock, moved by the tests instead of waiting.
    let laptopClock = TestClock()
    let desktopClock: TestClock
    let laptop: SyncPeer
    let desktop: SyncPeer

    init() throws {
        desktopClock = TestClock(startingAt: laptopClock.now())
        laptop = try SyncPeer(clock: laptopClock)
        desktop = try SyncPeer(clock: desktopClock)
        try trust([laptop, desktop], [laptop, desktop])
    }

    /// Exports `from` to `to` and imports it there, a second of both clocks later.
    @discardableResult
    private func send(_ from: SyncPeer, to: SyncPeer) throws -> ImportReport {
        later()
        return try to.storage.sync.importBundle(from: try from.export(to: [to]))
    }

    /// A second later on both machines.
    private func later() {
        laptopClock.advance(by: 1000)
        desktopClock.advance(by: 1000)
    }

    private func password(_ peer: SyncPeer) throws -> String? {
        try peer.storage.credentials(for: space)["alice"]?.password
    }

    private func keptRows(_ peer: SyncPeer) throws -> Int {
        try peer.storage.repository.read { try $0.allKeptVersions() }.count
    }

    @Test func theLoserOfAConcurrentEditIsKeptReportedAnnouncedAndRestoredEverywhere() async throws {
        let changes = laptop.storage.changes()
        try laptop.storage.set(sync("alice", "pw-laptop"), for: space)
        later()
        try desktop.storage.set(sync("alice", "pw-desktop"), for: space)

        // The later edit wins on both machines, as before; the laptop names what it lost.
        let report = try send(desktop, to: laptop)
        #expect(report.updated == 1)
        #expect(report.conflicts == [SyncConflict(space: space, user: "alice", kept: true)])
        #expect(try send(laptop, to: desktop).conflicts.isEmpty)
        #expect(try password(laptop) == "pw-desktop")
        #expect(try password(desktop) == "pw-desktop")

        let kept = try laptop.storage.sync.keptVersions(of: "alice", in: space)
        #expect(kept.map(\.credential.password) == ["pw-laptop"])
        #expect(kept.first?.writtenBy == (try laptop.storage.sync.deviceID))
        #expect(kept.first?.replacedBy == (try desktop.storage.sync.deviceID))
        #expect(try desktop.storage.sync.keptVersions(of: "alice", in: space).isEmpty)
        #expect(!"\(kept)".contains("pw-laptop"))

        let heard = await collectArrived(changes, count: 4, timeout: .seconds(5))
        #expect(heard.contains(CredentialChange(kind: .conflict, space: space, user: "alice", persistence: .synchronizable, origin: .syncImport)))

        // The kept version never travels.
        let bundle = try laptop.export(to: [desktop])
        #expect(try desktop.decode(bundle).items.compactMap(\.password) == ["pw-desktop"])

        // Restoring is a new write: it wins on both machines, and is no conflict there.
        later()
        try laptop.storage.sync.restore(try #require(kept.first))
        #expect(try password(laptop) == "pw-laptop")
        #expect(try send(laptop, to: desktop).conflicts.isEmpty)
        #expect(try send(desktop, to: laptop).conflicts.isEmpty)
        #expect(try password(desktop) == "pw-laptop")
        #expect(try password(laptop) == "pw-laptop")
        #expect(try laptop.storage.maintenance.verify().isSound)
    }

    /// The laptop removes alice; the desktop, whose clock is 23 hours ahead, had changed her
    /// password before, without having seen the removal. The change reads later and wins: alice is
    /// back on the laptop, and the merge says so rather than undoing the removal without a word.
    @Test func aRemovalHereThatAConcurrentEditUndoesIsReported() throws {
        try laptop.storage.set(Credential(user: "alice", password: "first", persistence: .synchronizable), for: space)
        try send(laptop, to: desktop)
        try send(desktop, to: laptop)
        desktopClock.advance(by: 23 * 3600 * 1000)
        try desktop.storage.set(Credential(user: "alice", password: "from-desktop", persistence: .synchronizable), for: space)
        later()
        try laptop.storage.remove(user: "alice", for: space, options: .removeSynchronizable)
        let report = try send(desktop, to: laptop)
        #expect(report.added == 1)
        #expect(report.conflicts == [SyncConflict(space: space, user: "alice", kept: false)], "\(report)")
        #expect(try laptop.storage.credentials(for: space)["alice"]?.password == "from-desktop")
    }

    @Test func aPermanentCredentialThatASynchronizableOneReplacesIsKeptAndReported() throws {
        // The laptop keeps alice outside sync; the desktop stores alice for the fleet.
        try laptop.storage.set(Credential(user: "alice", password: "laptop only", persistence: .permanent), for: space)
        later()
        try desktop.storage.set(sync("alice", "for the fleet"), for: space)

        let report = try send(desktop, to: laptop)
        #expect(report.conflicts == [SyncConflict(space: space, user: "alice", kept: true)])
        #expect(try password(laptop) == "for the fleet", "every machine holds the fleet's value")
        let kept = try laptop.storage.sync.keptVersions(of: "alice", in: space)
        #expect(kept.map(\.credential.password) == ["laptop only"])
        #expect(kept.first?.credential.persistence == .permanent, "kept as it was: never in a bundle")
        // The kept permanent value never leaves the laptop.
        let back = try laptop.export(to: [desktop])
        #expect(try desktop.decode(back).items.compactMap(\.password) == ["for the fleet"])
    }

    @Test func aMoveOutOfSyncThatLosesToAConcurrentEditKeepsTheMovedValue() throws {
        try laptop.storage.set(sync("alice", "shared"), for: space)
        try send(laptop, to: desktop)
        later()
        // The laptop takes alice out of sync with a value of its own; the desktop, which has not
        // merged that yet, edits alice a second later.
        try laptop.storage.set(Credential(user: "alice", password: "mine alone", persistence: .permanent), for: space, options: .removeSynchronizable)
        later()
        try desktop.storage.set(sync("alice", "edited on the desktop"), for: space)

        let report = try send(desktop, to: laptop)
        #expect(report.conflicts == [SyncConflict(space: space, user: "alice", kept: true)])
        #expect(try password(laptop) == "edited on the desktop")
        #expect(try laptop.storage.sync.keptVersions(of: "alice", in: space).map(\.credential.password) == ["mine alone"])
        #expect(try send(laptop, to: desktop).conflicts.isEmpty)
        #expect(try password(desktop) == "edited on the desktop")
    }

    @Test func aVersionIsNotRestoredOverACredentialKeptOutsideSyncNow() throws {
        try laptop.storage.set(sync("alice", "pw-laptop"), for: space)
        later()
        try desktop.storage.set(sync("alice", "pw-desktop"), for: space)
        try send(desktop, to: laptop)
        let kept = try #require(try laptop.storage.sync.keptVersions(of: "alice", in: space).first)
        // The user then takes alice out of sync on the laptop, with a value of its own.
        try laptop.storage.set(Credential(user: "alice", password: "laptop only", persistence: .permanent), for: space, options: .removeSynchronizable)
        expectError(.invalidInput) { try laptop.storage.sync.restore(kept) }
        let current = try #require(try laptop.storage.credentials(for: space)["alice"])
        #expect(current.password == "laptop only" && current.persistence == .permanent)
    }

    @Test func theSameValueArrivingInSyncIsNoConflict() throws {
        try laptop.storage.set(Credential(user: "alice", password: "same", persistence: .permanent), for: space)
        later()
        try desktop.storage.set(sync("alice", "same"), for: space)
        let report = try send(desktop, to: laptop)
        #expect(report.conflicts.isEmpty)
        #expect(try laptop.storage.sync.keptVersions(of: "alice", in: space).isEmpty)
    }

    @Test func anEditOfA23HourSlowMachineThatLosesToAnEarlierOneIsKept() throws {
        let hour: Int64 = 3600 * 1000
        // The desktop's clock is right; the laptop's is 23 hours slow. The desktop edits first.
        try desktop.storage.set(sync("alice", "pw-desktop"), for: space)
        laptopClock.advance(by: 6 * hour - 23 * hour)
        desktopClock.advance(by: 6 * hour)
        try laptop.storage.set(sync("alice", "pw-laptop-6h-later"), for: space)

        // By the clocks the desktop's edit is 17 hours newer, and wins: the laptop keeps its own.
        let report = try laptop.storage.sync.importBundle(from: try desktop.export(to: [laptop]))
        #expect(report.conflicts == [SyncConflict(space: space, user: "alice", kept: true)])
        #expect(try password(laptop) == "pw-desktop")
        let kept = try laptop.storage.sync.keptVersions(of: "alice", in: space)
        #expect(kept.map(\.credential.password) == ["pw-laptop-6h-later"])

        // Restored on the slow machine, it wins everywhere (its clock has moved past the desktop's).
        try laptop.storage.sync.restore(try #require(kept.first))
        try send(laptop, to: desktop)
        #expect(try password(desktop) == "pw-laptop-6h-later")
    }

    @Test func anEditMadeAfterASyncOfTheOtherMachineIsNoConflict() throws {
        try laptop.storage.set(sync("alice", "pw-1"), for: space)
        // The laptop syncs (it merges the desktop's bundle, then the desktop merges its own).
        try send(desktop, to: laptop)
        try send(laptop, to: desktop)
        later()
        try desktop.storage.set(sync("alice", "pw-2"), for: space)

        #expect(try send(desktop, to: laptop).conflicts.isEmpty)
        #expect(try password(laptop) == "pw-2")
        #expect(try laptop.storage.sync.keptVersions(of: "alice", in: space).isEmpty)
    }

    @Test func keptVersionsSurviveARekeyAndExpireWithTheTombstoneWindow() throws {
        try laptop.storage.set(sync("alice", "pw-laptop"), for: space)
        later()
        try desktop.storage.set(sync("alice", "pw-desktop"), for: space)
        try send(desktop, to: laptop)
        #expect(try keptRows(laptop) == 1)

        // A rekey re-seals them; they stay readable.
        try laptop.storage.maintenance.rekey()
        #expect(try laptop.storage.sync.keptVersions(of: "alice", in: space).map(\.credential.password) == ["pw-laptop"])

        // Once deletions are no longer remembered they are no longer listed, and the next import drops them.
        let expired = SyncLedger.tombstoneLifetimeMillis + TestClock.day
        laptopClock.advance(by: expired)
        #expect(try laptop.storage.sync.keptVersions(of: "alice", in: space).isEmpty)
        desktopClock.advance(by: expired)
        try send(desktop, to: laptop)
        #expect(try keptRows(laptop) == 0)
    }

    @Test func removingTheCredentialRemovesItsKeptVersions() throws {
        try laptop.storage.set(sync("alice", "pw-laptop"), for: space)
        later()
        try desktop.storage.set(sync("alice", "pw-desktop"), for: space)
        try send(desktop, to: laptop)
        #expect(try keptRows(laptop) == 1)

        #expect(try laptop.storage.remove(user: "alice", for: space, options: .removeSynchronizable))
        #expect(try keptRows(laptop) == 0)
        #expect(try laptop.storage.sync.keptVersions(of: "alice", in: space).isEmpty)
        #expect(try laptop.storage.maintenance.verify().isSound)
    }

    @Test func aCredentialKeepsAtMostItsLimitOfVersions() throws {
        for round in 0...SyncDevice.keptVersionsPerCredential {
            try laptop.storage.set(sync("alice", "pw-laptop-\(round)"), for: space)
            later()
            try desktop.storage.set(sync("alice", "pw-desktop-\(round)"), for: space)
            #expect(try send(desktop, to: laptop).conflicts.count == 1)
        }
        let kept = try laptop.storage.sync.keptVersions(of: "alice", in: space)
        #expect(kept.count == SyncDevice.keptVersionsPerCredential)
        #expect(kept.first?.credential.password == "pw-laptop-\(SyncDevice.keptVersionsPerCredential)")
        #expect(!kept.map(\.credential.password).contains("pw-laptop-0"))
    }
}
