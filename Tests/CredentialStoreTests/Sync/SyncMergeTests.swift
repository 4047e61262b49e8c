import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// The merge rules of docs/contract.md ("Sync between machines"): last writer wins per item and per default choice under a hybrid
/// logical clock, deletions as tombstones, tier moves, clock-skew and age limits, and the change
/// notifications an import sends.
@Suite struct SyncMergeTests {
    let laptop: SyncPeer
    let desktop: SyncPeer
    let space = Fixture.space(realm: "API")
    let otherSpace = Fixture.space("git.example.org")
    /// Both machines' clock, moved by the tests instead of waiting.
    let clock = TestClock()

    init() throws {
        laptop = try SyncPeer(clock: clock)
        desktop = try SyncPeer(clock: clock)
        try trust([laptop, desktop], [laptop, desktop])
    }


    /// Exports `from` to `to` and imports it there.
    @discardableResult
    private func send(_ from: SyncPeer, to: SyncPeer) throws -> ImportReport {
        try to.storage.sync.importBundle(from: try from.export(to: [to]))
    }

    /// Moves the clock on, so the next change is strictly later.
    private func tick() {
        clock.advance(by: 5)
    }

    // MARK: Tombstones

    @Test func aDeletionTravelsAsATombstoneAndAStaleBundleDoesNotResurrectIt() throws {
        let a = laptop.storage, b = desktop.storage
        // "keeper" is the space's default, so removing "bob" leaves the default alone.
        try a.set(sync("keeper", "k"), for: space)
        try a.set(sync("bob", "b"), for: space)
        #expect(try send(laptop, to: desktop) == ImportReport(added: 2))
        let staleFromB = try desktop.export(to: [laptop, desktop])

        tick()
        try a.remove(user: "bob", for: space, options: .removeSynchronizable)
        let deletion = try laptop.export(to: [desktop])
        let carried = try desktop.decode(deletion).items.first { $0.user == "bob" }
        #expect(carried != nil && carried?.password == nil, "the deletion is carried as a tombstone")

        #expect(try b.sync.importBundle(from: deletion) == ImportReport(removed: 1, unchanged: 1))
        #expect(try b.credentials(for: space).keys.sorted() == ["keeper"])

        // B's bundle from before the deletion, and B's bundle from after it, both leave bob deleted on A.
        #expect(try a.sync.importBundle(from: staleFromB) == ImportReport(unchanged: 2))
        #expect(try send(desktop, to: laptop) == ImportReport(unchanged: 2))
        #expect(try a.credentials(for: space).keys.sorted() == ["keeper"])
        // And the stale bundle does not bring bob back to B either.
        #expect(try b.sync.importBundle(from: staleFromB) == ImportReport(unchanged: 2))
        #expect(try b.credentials(for: space).keys.sorted() == ["keeper"])
    }

    @Test func aTombstoneDoesNotRemoveACredentialKeptOutsideSync() throws {
        let a = laptop.storage, b = desktop.storage
        try a.set(sync("keeper", "k"), for: space)
        try a.set(sync("bob", "b"), for: space)
        try send(laptop, to: desktop)
        try b.set(Fixture.credential("bob", "local", .permanent), for: space, options: .removeSynchronizable)
        tick()
        try a.remove(user: "bob", for: space, options: .removeSynchronizable)
        #expect(try send(laptop, to: desktop).removed == 0)
        #expect(try b.credentials(for: space)["bob"] == Fixture.credential("bob", "local", .permanent))
    }

    @Test func aDeletionOnOneMachineLosesToALaterEditOnTheOther() throws {
        let a = laptop.storage, b = desktop.storage
        try a.set(sync("keeper", "k"), for: space)
        try a.set(sync("bob", "b1"), for: space)
        try send(laptop, to: desktop)
        try a.remove(user: "bob", for: space, options: .removeSynchronizable)
        tick()
        try b.set(sync("bob", "b2"), for: space)
        try send(laptop, to: desktop)
        try send(desktop, to: laptop)
        #expect(try a.credentials(for: space)["bob"] == sync("bob", "b2"))
        #expect(try b.credentials(for: space)["bob"] == sync("bob", "b2"))
    }

    /// 189 days: the 180 a bundle stays acceptable, the 24 hours two clocks may disagree each
    /// way, and a week's margin (docs/sync-format.md, "Windows and margins").
    @Test func tombstonesAreKept189DaysAndThenDropped() throws {
        let b = desktop.storage
        let day = TestClock.day
        try b.set(sync("keeper", "k"), for: space)
        let early = try forgedBundle(items: [
            SignedBundleItem(space: space, user: "gone-long-ago", password: nil, wall: clock.now()),
        ])
        #expect(try b.sync.importBundle(from: early) == ImportReport(unchanged: 1), "nothing here to remove")
        _ = try desktop.export(to: [laptop])
        clock.advance(by: 2 * day)
        let later = try forgedBundle(items: [
            SignedBundleItem(space: space, user: "gone-recently", password: nil, wall: clock.now()),
        ])
        #expect(try b.sync.importBundle(from: later) == ImportReport(unchanged: 1))
        _ = try desktop.export(to: [laptop])
        // The laptop merges a later bundle of the desktop's, which carries both, and says so.
        clock.advance(by: 8 * day)
        try laptop.storage.sync.importBundle(from: desktop.export(to: [laptop]))
        try b.sync.importBundle(from: laptop.export(to: [desktop]))
        // 190 days after the first deletion, 188 after the second.
        clock.advance(by: 180 * day)
        let exported = try desktop.export(to: [laptop])
        let users = try laptop.decode(exported).items.map(\.user).sorted()
        #expect(users == ["gone-recently", "keeper"], "the expired tombstone is dropped, the other kept")
        #expect(try syncRegister(b, space, "gone-long-ago") == nil)
        #expect(try syncRegister(b, space, "gone-recently")?.deleted == true)
        #expect(try b.maintenance.verify().isSound, "the expiry is folded into the table seal")
        #expect(throws: Never.self) { try desktop.folder.open() }
    }

    /// A deletion is forgotten only once every trusted device has merged a bundle that carried
    /// it: the laptop, away for 400 days, would otherwise bring the credential back.
    @Test func aDeletionIsKeptUntilEveryTrustedDeviceHasMergedIt() throws {
        let b = desktop.storage
        let day = TestClock.day
        try b.set(sync("keeper", "k"), for: space)
        try b.set(sync("gone", "g"), for: space)
        try laptop.storage.sync.importBundle(from: desktop.export(to: [laptop]))
        try b.sync.importBundle(from: laptop.export(to: [desktop]))
        clock.advance(by: 5)
        try b.remove(user: "gone", for: space, options: .removeSynchronizable)
        _ = try desktop.export(to: [laptop])
        clock.advance(by: 400 * day)
        var users = try laptop.decode(desktop.export(to: [laptop])).items.map(\.user).sorted()
        #expect(users == ["gone", "keeper"], "the laptop has not merged the deletion: it is kept")

        // The laptop comes back: the deletion reaches it, and its bundle says it merged it.
        #expect(try laptop.storage.sync.importBundle(from: desktop.export(to: [laptop])).removed == 1)
        try b.sync.importBundle(from: laptop.export(to: [desktop]))
        users = try laptop.decode(desktop.export(to: [laptop])).items.map(\.user).sorted()
        #expect(users == ["keeper"], "every trusted device holds the deletion, 400 days on: it is forgotten")
        #expect(try b.maintenance.verify().isSound)
    }

    /// Two devices that sync every fortnight forget a deletion once both hold it and the 189
    /// days have passed, rather than handing it back and forth as new for ever.
    @Test func aFleetThatSyncsEveryFortnightForgetsADeletionAfterItsTime() throws {
        let b = desktop.storage
        let day = TestClock.day
        try b.set(sync("keeper", "k"), for: space)
        try b.set(sync("gone", "g"), for: space)
        // As `credstore sync` does: merge the other's bundle as it lies in the folder, then write one's own.
        var folder: [URL?] = [nil, nil]
        func round() throws {
            for (index, (peer, other)) in [(desktop, laptop), (laptop, desktop)].enumerated() {
                if let bundle = folder[1 - index] { try peer.storage.sync.importBundle(from: bundle) }
                folder[index] = try peer.export(to: [other])
            }
        }
        try round()
        clock.advance(by: 5)
        try b.remove(user: "gone", for: space, options: .removeSynchronizable)
        var forgotten: Int64?
        for fortnight in 1...40 {
            clock.advance(by: 15 * day)
            try round()
            let held = try [desktop, laptop].map { peer in
                try laptop.decode(peer.export(to: [laptop])).items.contains { $0.user == "gone" }
            }
            if forgotten == nil, held == [false, false] { forgotten = Int64(fortnight) * 15 }
            if let forgotten {
                #expect(held == [false, false], "the deletion came back on day \(fortnight * 15), forgotten on day \(forgotten)")
            }
        }
        #expect(forgotten.map { (189...240).contains($0) } == true, "forgotten on day \(forgotten.map(String.init) ?? "never")")
        #expect(try laptop.storage.credentials(for: space).keys.sorted() == ["keeper"])
    }

    @Test func theSameServerSpelledDifferentlyIsOneItem() throws {
        let a = laptop.storage, b = desktop.storage
        let shouted = ProtectionSpace(host: "API.Example.COM.", port: 0, protocol: "HTTPS", realm: "API")
        try a.set(sync("alice", "from-laptop"), for: shouted)
        tick()
        try b.set(sync("alice", "from-desktop"), for: space)
        try send(laptop, to: desktop)
        try send(desktop, to: laptop)
        #expect(try a.allCredentials().values.flatMap(\.values) == [sync("alice", "from-desktop")])
        #expect(try b.allCredentials().values.flatMap(\.values) == [sync("alice", "from-desktop")])
    }

    // MARK: Tier moves

    @Test func movingASynchronizableCredentialToPermanentRemovesTheOtherMachinesCopyOnly() throws {
        let a = laptop.storage, b = desktop.storage
        try a.set(sync("keeper", "k"), for: space)
        try a.set(sync("alice", "shared"), for: space)
        try send(laptop, to: desktop)
        #expect(try b.credentials(for: space)["alice"] == sync("alice", "shared"))

        tick()
        try a.set(Fixture.credential("alice", "mine-only", .permanent), for: space, options: .removeSynchronizable)
        #expect(try syncRegister(a, space, "alice")?.deleted == true, "leaving the tier records a tombstone")
        let bundle = try laptop.export(to: [desktop])
        let items = try desktop.decode(bundle).items
        #expect(items.first { $0.user == "alice" }.map { $0.password == nil } == true, "the bundle carries alice's tombstone")
        #expect(!items.contains { $0.password == "mine-only" })
        #expect(try Data(contentsOf: bundle).range(of: Data("mine-only".utf8)) == nil)

        #expect(try b.sync.importBundle(from: bundle) == ImportReport(removed: 1, unchanged: 1))
        #expect(try b.credentials(for: space)["alice"] == nil)
        #expect(try a.credentials(for: space)["alice"] == Fixture.credential("alice", "mine-only", .permanent))

        // B's answer does not turn A's permanent credential back into a synchronizable one.
        try send(desktop, to: laptop)
        #expect(try a.credentials(for: space)["alice"] == Fixture.credential("alice", "mine-only", .permanent))

        // Moving it back into the tier makes it travel again.
        tick()
        try a.set(sync("alice", "shared-again"), for: space)
        #expect(try send(laptop, to: desktop).added == 1)
        #expect(try b.credentials(for: space)["alice"] == sync("alice", "shared-again"))
    }

    @Test func movingASynchronizableCredentialToTheSessionTierAlsoRemovesItElsewhere() throws {
        let a = laptop.storage, b = desktop.storage
        try a.set(sync("keeper", "k"), for: space)
        try a.set(sync("alice", "shared"), for: space)
        try send(laptop, to: desktop)
        tick()
        try a.set(Fixture.credential("alice", "session-secret", .forSession), for: space, options: .removeSynchronizable)
        let bundle = try laptop.export(to: [desktop])
        #expect(try Data(contentsOf: bundle).range(of: Data("session-secret".utf8)) == nil)
        #expect(try b.sync.importBundle(from: bundle).removed == 1)
        #expect(try b.credentials(for: space)["alice"] == nil)
        #expect(try a.credentials(for: space)["alice"] == Fixture.credential("alice", "session-secret", .forSession))
    }

    // MARK: Concurrent edits

    @Test(arguments: [true, false])
    func theLaterOfTwoConcurrentEditsWinsOnBothMachines(laterFirst: Bool) throws {
        let a = laptop.storage, b = desktop.storage
        try a.set(sync("alice", "original"), for: space)
        try send(laptop, to: desktop)

        try a.set(sync("alice", "from-laptop"), for: space)
        tick()
        try b.set(sync("alice", "from-desktop"), for: space)
        let fromA = try laptop.export(to: [desktop])
        let fromB = try desktop.export(to: [laptop])
        // The laptop's edit lost, and the desktop never saw it: the laptop reports and keeps it.
        let lost = [SyncConflict(space: space, user: "alice", kept: true)]
        if laterFirst {
            #expect(try a.sync.importBundle(from: fromB) == ImportReport(updated: 1, conflicts: lost))
            #expect(try b.sync.importBundle(from: fromA) == ImportReport(unchanged: 1))
        } else {
            #expect(try b.sync.importBundle(from: fromA) == ImportReport(unchanged: 1))
            #expect(try a.sync.importBundle(from: fromB) == ImportReport(updated: 1, conflicts: lost))
        }
        #expect(try a.credentials(for: space) == ["alice": sync("alice", "from-desktop")])
        #expect(try b.credentials(for: space) == ["alice": sync("alice", "from-desktop")])
        #expect(try SyncView(a, spaces: [space]) == SyncView(b, spaces: [space]))
    }

    @Test func theSameUserCreatedOnTwoMachinesIsOneItem() throws {
        let a = laptop.storage, b = desktop.storage
        try a.set(sync("alice", "made-on-laptop"), for: space)
        tick()
        try b.set(sync("alice", "made-on-desktop"), for: space)
        try send(laptop, to: desktop)
        try send(desktop, to: laptop)
        #expect(try a.credentials(for: space) == ["alice": sync("alice", "made-on-desktop")])
        #expect(try b.credentials(for: space) == ["alice": sync("alice", "made-on-desktop")])
        #expect(try a.entries().count == 1 && b.entries().count == 1)
    }

    @Test func anEditAfterAnImportWinsOverTheImportedValue() throws {
        // The clock moves past what it receives, so a local edit made right after an import is
        // later than the imported one even if the sender's wall clock ran ahead.
        let a = laptop.storage, b = desktop.storage
        try a.set(sync("alice", "one"), for: space)
        try send(laptop, to: desktop)
        try b.set(sync("alice", "two"), for: space)
        try send(desktop, to: laptop)
        #expect(try a.credentials(for: space)["alice"]?.password == "two")
        try a.set(sync("alice", "three"), for: space)
        try send(laptop, to: desktop)
        #expect(try b.credentials(for: space)["alice"]?.password == "three")
    }

    // MARK: Defaults

    @Test func defaultChoicesSyncAsTheirOwnLastWriterWinsValue() throws {
        let a = laptop.storage, b = desktop.storage
        try a.set(sync("alice", "a"), for: space)
        try a.set(sync("bob", "b"), for: space)
        try send(laptop, to: desktop)
        #expect(try b.defaultCredential(for: space)?.user == "alice", "the first credential's default travels")

        // Both machines choose a different default; the later choice wins everywhere.
        try a.setDefaultCredential(sync("alice", "a"), for: space)
        try b.setDefaultCredential(sync("bob", "b"), for: space)
        tick()
        try a.setDefaultCredential(sync("bob", "b"), for: space)
        tick()
        try b.setDefaultCredential(sync("alice", "a"), for: space)
        try send(laptop, to: desktop)
        try send(desktop, to: laptop)
        #expect(try a.defaultCredential(for: space)?.user == "alice")
        #expect(try b.defaultCredential(for: space)?.user == "alice")

        // A default choice travels even when no credential changed, and a password update of the
        // default leaves the choice alone.
        tick()
        try a.setDefaultCredential(sync("bob", "b"), for: space)
        #expect(try send(laptop, to: desktop) == ImportReport(unchanged: 2))
        #expect(try b.defaultCredential(for: space)?.user == "bob")
        tick()
        try b.set(sync("bob", "b-new"), for: space)
        try send(desktop, to: laptop)
        #expect(try a.defaultCredential(for: space) == sync("bob", "b-new"))
    }

    @Test func aDefaultChoiceIsSpaceScoped() throws {
        let a = laptop.storage, b = desktop.storage
        for target in [space, otherSpace] {
            try a.set(sync("alice", "a"), for: target)
            try a.set(sync("bob", "b"), for: target)
        }
        try a.setDefaultCredential(sync("bob", "b"), for: otherSpace)
        try send(laptop, to: desktop)
        #expect(try b.defaultCredential(for: space)?.user == "alice")
        #expect(try b.defaultCredential(for: otherSpace)?.user == "bob")
    }

    @Test func removingTheSynchronizableDefaultStillLetsTheStoreExportAndTheClearedDefaultTravels() throws {
        let a = laptop.storage, b = desktop.storage
        try a.set(sync("alice", "a"), for: space)
        try a.set(sync("bob", "b"), for: space)
        try a.set(sync("carol", "c"), for: space)
        try send(laptop, to: desktop)
        #expect(try b.defaultCredential(for: space)?.user == "alice")
        tick()
        try a.remove(user: "alice", for: space, options: .removeSynchronizable)
        // Removing the default records a "no default" register, which must open (it once read as
        // tamperDetected: `try?` flattened its nil user), travel, and clear the default elsewhere.
        try send(laptop, to: desktop)
        #expect(try b.credentials(for: space).keys.sorted() == ["bob", "carol"])
        #expect(try b.defaultCredential(for: space) == nil, "no default is guessed among two")
        #expect(try SyncView(a, spaces: [space]) == SyncView(b, spaces: [space]))
        // The same after moving the default out of the tier into the session.
        try a.setDefaultCredential(sync("bob", "b"), for: space)
        try send(laptop, to: desktop)
        #expect(try b.defaultCredential(for: space)?.user == "bob")
        tick()
        try a.set(Fixture.credential("bob", "session-only", .forSession), for: space, options: .removeSynchronizable)
        try send(laptop, to: desktop)
        #expect(try b.credentials(for: space).keys.sorted() == ["carol"])
        #expect(try SyncView(a, spaces: [space]) == SyncView(b, spaces: [space]))
    }

    @Test func aDefaultChoiceReachesAStoreThatGotTheChosenCredentialFromAThirdMachine() throws {
        // Three stores: the laptop makes bob the default; the desktop hears of bob's choice while
        // bob has been deleted there, then bob comes back through a third machine. Every store
        // must end with the same default whatever the order the bundles arrived in.
        let phone = try SyncPeer()
        let all = [laptop, desktop, phone]
        try trust(all, all)
        let a = laptop.storage, b = desktop.storage, c = phone.storage
        try a.set(sync("alice", "a"), for: space)
        try a.set(sync("bob", "b"), for: space)
        try a.set(sync("carol", "c"), for: space)
        try b.sync.importBundle(from: try laptop.export(to: [desktop]))
        try c.sync.importBundle(from: try laptop.export(to: [phone]))
        // The desktop chooses bob as default; the laptop (later) removes bob, then the phone
        // (later still) sets bob again: bob is live, and the desktop's choice is the newest default.
        try b.setDefaultCredential(sync("bob", "b"), for: space)
        tick()
        try a.remove(user: "bob", for: space, options: .removeSynchronizable)
        let removal = try laptop.export(to: [desktop, phone])
        tick()
        try c.sync.importBundle(from: removal)
        tick()
        try c.set(sync("bob", "b-again"), for: space)
        let choice = try desktop.export(to: [laptop, phone])
        let comeback = try phone.export(to: [laptop, desktop])

        // The laptop hears the choice before bob comes back; the phone, after.
        try a.sync.importBundle(from: choice)
        try a.sync.importBundle(from: comeback)
        try c.sync.importBundle(from: choice)
        try b.sync.importBundle(from: removal)
        try b.sync.importBundle(from: comeback)
        // A full exchange.
        for _ in 0..<2 {
            for sender in all {
                let bundle = try sender.export(to: all.filter { $0 !== sender })
                for receiver in all where receiver !== sender { try receiver.storage.sync.importBundle(from: bundle) }
            }
        }
        let views = try all.map { try SyncView($0.storage, spaces: [space]) }
        #expect(views.allSatisfy { $0.spaces.first?.value.credentials == ["alice": "a", "bob": "b-again", "carol": "c"] })
        let defaults = try all.map { try $0.storage.defaultCredential(for: space)?.user }
        #expect(views[0] == views[1] && views[1] == views[2], "\(views)")
        #expect(defaults == ["bob", "bob", "bob"], "the newest choice, bob, is live everywhere")
    }

    // MARK: Clocks and age

    /// A bundle signed by the laptop's device, for the desktop and the laptop, holding what the arguments say.
    private func forgedBundle(items: [SignedBundleItem], defaults: [SignedBundleDefault] = [], created: Int64? = nil) throws -> URL {
        let created = created ?? clock.now()
        let url = laptop.file("forged-\(UUID().uuidString).csbundle")
        try laptop.storage.writeBundle(items, defaults: defaults, created: created, for: [desktop.publicKey, laptop.publicKey], to: url)
        return url
    }

    @Test func aBundleFromAClockMoreThanADayAheadIsRefusedAndChangesNothing() throws {
        let b = desktop.storage
        try b.set(sync("alice", "here"), for: space)
        let before = try StoreSnapshot(b)
        let ahead = clock.now() + 25 * 3600 * 1000

        // The writer's own clock is ahead: its creation time and its own readings say so.
        let farItem = try forgedBundle(items: [
            SignedBundleItem(space: space, user: "bob", password: "fine", wall: clock.now()),
            SignedBundleItem(space: space, user: "alice", password: "from-the-future", wall: ahead),
        ], created: ahead)
        expectError(.invalidBundle, secrets: ["from-the-future"]) { try b.sync.importBundle(from: farItem) }
        let farDefault = try forgedBundle(
            items: [SignedBundleItem(space: space, user: "bob", password: "fine", wall: clock.now())],
            defaults: [SignedBundleDefault(space: space, user: "bob", wall: ahead)], created: ahead)
        expectError(.invalidBundle) { try b.sync.importBundle(from: farDefault) }
        expectError(.invalidBundle) { try b.sync.importBundle(from: farItem, dryRun: true) }
        #expect(try StoreSnapshot(b) == before)
    }

    @Test func aReadingMoreThanADayAheadFromAWriterWhoseClockIsRightIsHeldBack() throws {
        let b = desktop.storage
        try b.set(sync("alice", "here"), for: space)
        let ahead = clock.now() + 25 * 3600 * 1000
        // Created now: the writer's clock is right, so the reading came to it from elsewhere.
        let relayed = try forgedBundle(items: [
            SignedBundleItem(space: space, user: "bob", password: "fine", wall: clock.now()),
            SignedBundleItem(space: space, user: "alice", password: "from-the-future", wall: ahead),
        ])
        let report = try b.sync.importBundle(from: relayed)
        #expect(report.added == 1 && report.heldBack == 1, "\(report)")
        #expect(try b.credentials(for: space)["alice"]?.password == "here")
    }

    @Test func aBundleFromAClockLessThanADayAheadIsAcceptedAndLaterLocalEditsStillWin() throws {
        let a = laptop.storage, b = desktop.storage
        let ahead = clock.now() + 23 * 3600 * 1000
        let bundle = try forgedBundle(items: [SignedBundleItem(space: space, user: "alice", password: "early-bird", wall: ahead)])
        #expect(try b.sync.importBundle(from: bundle) == ImportReport(added: 1))
        try b.set(sync("alice", "edited-later"), for: space)
        #expect(try syncRegister(b, space, "alice").map { $0.stamp.wall >= ahead } == true, "the clock moved past the remote reading")
        try a.sync.importBundle(from: bundle)
        // The forged item carries the laptop's own device: its replacement is the laptop's conflict.
        #expect(try send(desktop, to: laptop).updated == 1)
        #expect(try a.credentials(for: space)["alice"]?.password == "edited-later")
    }

    @Test func aLaterChangeWinsWhenTheWallClockStandsStillOrStepsBack() throws {
        let a = laptop.storage, b = desktop.storage
        try a.set(sync("alice", "first"), for: space)
        try send(laptop, to: desktop)
        // The same millisecond on both machines: the counter orders the changes.
        try b.set(sync("alice", "second"), for: space)
        // (Each replaced value was written in the millisecond of the other's last merge, or before
        // any: counted as a concurrent edit, and kept; docs/sync-format.md.)
        #expect(try send(desktop, to: laptop).updated == 1)
        #expect(try a.credentials(for: space)["alice"]?.password == "second")
        // The wall clock steps back a minute: a change made after receiving still wins.
        clock.advance(by: -60_000)
        try a.set(sync("alice", "third"), for: space)
        #expect(try send(laptop, to: desktop).updated == 1)
        #expect(try b.credentials(for: space)["alice"]?.password == "third")
        #expect(try syncRegister(b, space, "alice").map { $0.stamp.wall > clock.now() } == true, "the reading stays ahead of the wall clock")
    }

    @Test func aBundleCreatedMoreThan180DaysAgoIsRefused() throws {
        let b = desktop.storage
        let day = TestClock.day
        let bundle = try forgedBundle(items: [SignedBundleItem(space: space, user: "alice", password: "stale", wall: clock.now())])
        clock.advance(by: 2 * day)
        let accepted = try forgedBundle(items: [SignedBundleItem(space: space, user: "alice", password: "old-but-valid", wall: clock.now())])
        // The first bundle is now 181 days old, the second 179.
        clock.advance(by: 179 * day)
        let before = try StoreSnapshot(b)
        expectError(.bundleTooOld) { try b.sync.importBundle(from: bundle) }
        #expect(try StoreSnapshot(b) == before)
        #expect(try b.sync.importBundle(from: accepted) == ImportReport(added: 1))
    }

    // MARK: Notifications

    @Test func subscribersSeeImportedChangesWithTheSyncImportOrigin() async throws {
        let a = laptop.storage, b = desktop.storage
        try b.set(sync("bob", "old"), for: space)
        try b.set(sync("erin", "e"), for: otherSpace)
        try b.set(sync("dave", "d"), for: otherSpace)
        try send(desktop, to: laptop)
        // A whole round: the desktop merges the laptop after its own changes, so the laptop's
        // later changes of them are no concurrent edits.
        tick()
        try send(laptop, to: desktop)
        tick()
        try a.set(sync("alice", "a"), for: space)
        try a.set(sync("bob", "b-new"), for: space)
        try a.set(sync("carol", "c"), for: otherSpace)
        try a.remove(user: "dave", for: otherSpace, options: .removeSynchronizable)
        let bundle = try laptop.export(to: [desktop])

        let stream = b.changes()
        try b.sync.importBundle(from: bundle, dryRun: true)
        let report = try b.sync.importBundle(from: bundle)
        #expect(report == ImportReport(added: 2, updated: 1, removed: 1, unchanged: 1))
        let changes = await collectArrived(stream, count: 5, timeout: .seconds(3))
        #expect(changes.allSatisfy { $0.origin == .syncImport }, "\(changes)")
        let summary = Set(changes.map { "\($0.kind.rawValue) \($0.space.host) \($0.user) \($0.persistence)" })
        #expect(summary.isSuperset(of: [
            "added api.example.com alice synchronizable",
            "updated api.example.com bob synchronizable",
            "added git.example.org carol synchronizable",
            "removed git.example.org dave synchronizable",
        ]), "\(summary)")
        #expect(changes.count == 4, "one announcement per changed item, none for the dry run: \(changes)")
    }
}
