import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreTestSupport

/// A seeded, randomized fleet of 4 to 6 stores that sync through one shared folder as
/// `credstore sync` does, each on its own clock, with a model of every acknowledged change: after
/// each quiet round it checks what docs/sync-format.md promises (docs/reliability.md, "Fleet
/// simulation"). The same seed replays the same run, operation for operation.
final class FleetSimulation {
    /// SplitMix64: small, fast and seeded, so that a failing run replays from its seed.
    struct Generator: RandomNumberGenerator {
        var state: UInt64

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// One machine: its store, its clock (the simulation's time plus its skew) and what it is doing.
    struct Device {
        let peer: SyncPeer
        let clock: TestClock
        let key: DeviceKey
        /// Its bundle in the shared folder, `<device id>.csbundle`.
        let bundle: URL
        var skew: Int64
        /// It does not sync before this simulation time.
        var offlineUntil: Int64 = 0
        /// When its bundle in the folder was last written (a ``FleetSimulation/sequence``); nil
        /// before its first.
        var exportedAt: Int?
    }

    /// A (space, user) of the fleet, by index.
    struct Key: Hashable, CustomStringConvertible {
        var space: Int
        var user: Int
        var description: String { "u\(user)@s\(space)" }
    }

    /// An acknowledged change: a write (with its password) or a removal, with the clock reading
    /// the store gave it.
    struct Change {
        var sequence: Int
        var op: Int
        var time: Int64
        var device: Int
        var password: String?
        var stamp: HybridTimestamp
    }

    /// A credential an import reported, as a conflict on its importer or as dropped.
    struct Report {
        var sequence: Int
        var op: Int
        var time: Int64
        var device: Int
        var key: Key
    }

    /// A merge of a device's bundle, with when that bundle was written: a store that merged a
    /// bundle written before a change of its device may not report that change, when it later
    /// replaces a value the store wrote meanwhile, as a concurrent edit (the interleaving
    /// docs/sync-format.md "Concurrent edits" says the rule misses).
    struct Merge {
        var sequence: Int
        var importer: Int
        var signer: Int
        var exportedAt: Int
    }

    static let hour: Int64 = 3600 * 1000
    static let day = TestClock.day
    /// The skew each clock keeps within, from the simulation's time and from every other clock.
    static let skewBound = 23 * hour
    static let spaceCount = 5
    static let userCount = 3

    let seed: UInt64
    private var random: Generator
    private let base = nowMillis()
    /// The simulation's real time, in milliseconds from `base`.
    private var time: Int64 = 0
    private var devices: [Device] = []
    private let folder: URL
    private let spaces = (0..<FleetSimulation.spaceCount).map { Fixture.space("fleet-\($0).example.com", realm: "R") }
    private var changes: [Key: [Change]] = [:]
    private var conflicts: [Report] = []
    private var dropped: [Report] = []
    private var merges: [Merge] = []
    /// Brief untrusts still to undo: (truster, trusted) → the operation that trusts again.
    private var untrusted: [Pair: Int] = [:]
    /// The lasting untrust under watch, until the next quiet round.
    private var revocation: Revocation?
    /// Whether an untrust happened since the last quiet round (its statement may be travelling).
    private var untrustedSinceQuietRound = false
    private var op = 0
    /// Orders every change, import and export, in real time (several happen in one operation).
    private var sequence = 0
    /// What each operation did, for a replay's reading (FLEET_SIM_TRACE).
    private(set) var trace: [String] = []
    private(set) var failed = false
    private(set) var quietRounds = 0
    /// How often the rules under test came into play: refusals by kind, held-back changes.
    private(set) var events: [String: Int] = [:]

    /// What the run met, for a long run's summary.
    var summary: String {
        "seed \(seed): \(devices.count) devices, \(op) operations, \(quietRounds) quiet rounds, \(time / Self.day) days, "
            + "\(conflicts.count) conflicts, \(dropped.count) dropped, "
            + events.keys.sorted().map { "\($0) \(events[$0]!)" }.joined(separator: ", ")
    }

    /// An untrust that lasts until the next quiet round: the revoker's statement travels, and
    /// once every other device has merged a bundle the revoker wrote after it (`settled`), the
    /// revoked device reads nothing written from then on (docs/sync-format.md, "Revocation").
    struct Revocation {
        var revoker: Int
        var revoked: Int
        /// The revoker's first bundle written after the untrust.
        var exported: Int?
        /// The devices that merged that bundle (or a later one of the revoker's).
        var informed: Set<Int> = []
        /// When the last of them did.
        var settled: Int?
    }

    struct Pair: Hashable {
        var truster: Int
        var trusted: Int
    }

    init(seed: UInt64) throws {
        self.seed = seed
        random = Generator(state: seed)
        folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("credstore-fleet-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let count = Int.random(in: 4...6, using: &random)
        for _ in 0..<count {
            let skew = newSkew()
            let clock = TestClock(startingAt: base + skew)
            let peer = try SyncPeer(clock: clock)
            let key = try peer.publicKey
            devices.append(Device(peer: peer, clock: clock, key: key, bundle: folder.appendingPathComponent("\(try peer.storage.sync.deviceID).csbundle"), skew: skew))
        }
        try trust(devices.map(\.peer), devices.map(\.peer))
        trace.append("skews (min): \(devices.map { $0.skew / 60_000 })")
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    /// Runs `operations` random operations, with a quiet round and its checks every 200 to 400 of
    /// them and at the end; stops
    /// at the first failed check.
    func run(operations: Int) throws {
        var nextQuiet = Int.random(in: 200...400, using: &random)
        while op < operations, !failed {
            try retrustDue()
            try step()
            op += 1
            if op >= nextQuiet || op == operations {
                try quietRound()
                nextQuiet = op + Int.random(in: 200...400, using: &random)
            }
        }
    }

    // MARK: Operations

    private func step() throws {
        let draw = Int.random(in: 0..<1000, using: &random)
        let d = Int.random(in: 0..<devices.count, using: &random)
        let key = Key(space: Int.random(in: 0..<Self.spaceCount, using: &random), user: Int.random(in: 0..<Self.userCount, using: &random))
        switch draw {
        case 0..<520: try write(d, key)
        case 520..<700: try remove(d, key)
        case 700..<780: try choose(d, key)
        case 780..<830:
            let online = devices.indices.filter { devices[$0].offlineUntil <= time }
            if let pick = online.randomElement(using: &random) { try sync(pick) } else { advance(by: Self.hour) }
        case 830..<940: advance(by: randomAdvance())
        case 940..<965: goOffline(d)
        case 965..<980: reskew(d)
        case 980..<995: try untrust(d)
        default:
            trace.append("\(op) d\(d) rekey")
            try devices[d].peer.storage.maintenance.rekey()
        }
    }

    private func space(_ key: Key) -> ProtectionSpace { spaces[key.space] }
    private func user(_ key: Key) -> String { "u\(key.user)" }

    private func holds(_ d: Int, _ key: Key) throws -> Bool {
        try devices[d].peer.storage.credentials(for: space(key))[user(key)]?.persistence == .synchronizable
    }

    /// Adds the credential, or edits it when the device has it: a new password either way.
    private func write(_ d: Int, _ key: Key) throws {
        let password = "pw-\(seed)-\(op)"
        trace.append("\(op) t=\(time) d\(d) set \(key)=\(password)")
        let storage = devices[d].peer.storage
        try storage.set(Credential(user: user(key), password: password, persistence: .synchronizable), for: space(key))
        try record(d, key, password: password)
    }

    private func remove(_ d: Int, _ key: Key) throws {
        guard try holds(d, key) else { return }
        trace.append("\(op) t=\(time) d\(d) remove \(key)")
        try devices[d].peer.storage.remove(user: user(key), for: space(key), options: .removeSynchronizable)
        try record(d, key, password: nil)
    }

    private func choose(_ d: Int, _ key: Key) throws {
        guard try holds(d, key) else { return }
        trace.append("\(op) t=\(time) d\(d) default \(key)")
        try devices[d].peer.storage.setDefault(user: user(key), for: space(key))
    }

    private func record(_ d: Int, _ key: Key, password: String?) throws {
        guard let register = try syncRegister(devices[d].peer.storage, space(key), user(key)) else {
            fail("\(key) has no sync register after a change on d\(d)")
            return
        }
        sequence += 1
        changes[key, default: []].append(Change(sequence: sequence, op: op, time: time, device: d, password: password, stamp: register.stamp))
    }

    /// `credstore sync` on device `d`: merges every other device's bundle in the folder, skipping
    /// those not for this store or too old, then writes its own, sealed to every device it
    /// trusts and itself.
    private func sync(_ d: Int) throws {
        let storage = devices[d].peer.storage
        var line = "\(op) t=\(time) d\(d) sync:"
        for other in devices.indices where other != d {
            let device = devices[other]
            guard let exportedAt = device.exportedAt else { continue }
            let report: ImportReport
            sequence += 1
            do {
                report = try storage.sync.importBundle(from: device.bundle)
            } catch let error as CredentialStorageError where error.code == .bundleNotForThisStore || error.code == .bundleTooOld {
                line += " d\(other):\(error.code.rawValue)"
                events[error.code.rawValue, default: 0] += 1
                continue
            }
            merges.append(Merge(sequence: sequence, importer: d, signer: other, exportedAt: exportedAt))
            if let exported = revocation?.exported, other == revocation?.revoker, exportedAt >= exported, d != revocation?.revoked {
                revocation?.informed.insert(d)
            }
            line += " d\(other):+\(report.added)~\(report.updated)-\(report.removed)"
            for conflict in report.conflicts {
                conflicts.append(Report(sequence: sequence, op: op, time: time, device: d, key: key(conflict.space, conflict.user)))
                line += " conflict(\(key(conflict.space, conflict.user)),kept:\(conflict.kept))"
            }
            for drop in report.dropped {
                dropped.append(Report(sequence: sequence, op: op, time: time, device: d, key: key(drop.space, drop.user)))
                line += " dropped(\(key(drop.space, drop.user)))"
            }
            if report.heldBack > 0 {
                line += " heldBack(\(report.heldBack))"
                events["heldBack", default: 0] += report.heldBack
            }
            events["imports", default: 0] += 1
        }
        let recipients = try storage.sync.trustedDevices().map(\.key) + [devices[d].key]
        if try storage.sync.export(to: devices[d].bundle, protection: .recipients(recipients)) {
            sequence += 1
            devices[d].exportedAt = sequence
            line += " wrote"
            if revocation?.revoker == d, revocation?.exported == nil { revocation?.exported = sequence }
        }
        trace.append(line)
        if let watched = revocation, watched.settled == nil, watched.exported != nil,
           watched.informed.union([watched.revoker, watched.revoked]).count == devices.count {
            revocation?.settled = sequence
            events["revocationsSettled", default: 0] += 1
            try checkRevokedReadsNoBundle(watched)
        }
    }

    private func key(_ space: ProtectionSpace, _ user: String) -> Key {
        Key(space: spaces.firstIndex(of: space) ?? -1, user: Int(user.dropFirst()) ?? -1)
    }

    /// Minutes to hours mostly, days sometimes, and now and then months: enough for tombstones,
    /// bundles and stale devices to expire between quiet rounds.
    private func randomAdvance() -> Int64 {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<70: Int64.random(in: 60_000...(12 * Self.hour), using: &random)
        case 70..<94: Int64.random(in: Self.day...(10 * Self.day), using: &random)
        default: Int64.random(in: (30 * Self.day)...(200 * Self.day), using: &random)
        }
    }

    /// Moves every clock on.
    private func advance(by milliseconds: Int64) {
        trace.append("\(op) advance \(milliseconds / 60_000) min")
        time += milliseconds
        for index in devices.indices { setClock(index) }
    }

    private func setClock(_ d: Int) {
        let clock = devices[d].clock
        clock.advance(by: base + time + devices[d].skew - clock.now())
    }

    /// Offline for a minute up to 400 days (log-uniform): it makes changes but does not sync.
    private func goOffline(_ d: Int) {
        let minutes = exp(Double.random(in: 0...log(400.0 * 24 * 60), using: &random))
        devices[d].offlineUntil = time + Int64(minutes * 60_000)
        trace.append("\(op) d\(d) offline for \(Int(minutes)) min")
    }

    /// A skew within ±23 h that keeps every pair of clocks within 23 h of each other.
    private func newSkew(except d: Int? = nil) -> Int64 {
        let others = devices.indices.filter { $0 != d }.map { devices[$0].skew }
        let low = max(-Self.skewBound, (others.max() ?? 0) - Self.skewBound)
        let high = min(Self.skewBound, (others.min() ?? 0) + Self.skewBound)
        return Int64.random(in: low...high, using: &random)
    }

    /// The device's clock is set anew (forwards or backwards, as a clock corrected by hand).
    private func reskew(_ d: Int) {
        devices[d].skew = newSkew(except: d)
        setClock(d)
        trace.append("\(op) d\(d) skew \(devices[d].skew / 60_000) min")
    }

    /// Untrusts another device, when the whole fleet trusts each other: half the time briefly (this
    /// device trusts it again 1 to 5 operations later, whether or not the revocation left it
    /// meanwhile), else until the next quiet round, under watch (``Revocation``).
    private func untrust(_ d: Int) throws {
        guard untrusted.isEmpty, revocation == nil, try everyoneTrustsEveryone() else { return }
        let other = devices.indices.filter { $0 != d }.randomElement(using: &random)!
        try devices[d].peer.storage.sync.untrust(devices[other].key)
        untrustedSinceQuietRound = true
        if Bool.random(using: &random) {
            untrusted[Pair(truster: d, trusted: other)] = op + Int.random(in: 1...5, using: &random)
            trace.append("\(op) d\(d) untrust d\(other) briefly")
        } else {
            revocation = Revocation(revoker: d, revoked: other)
            trace.append("\(op) d\(d) untrust d\(other) until the quiet round")
        }
    }

    private func everyoneTrustsEveryone() throws -> Bool {
        try devices.indices.allSatisfy { d in
            try Set(devices[d].peer.storage.sync.trustedDevices().map(\.key)).isSuperset(of: devices.indices.filter { $0 != d }.map { devices[$0].key })
        }
    }

    /// Once every other device has merged the revoker's statement, no bundle in the folder but
    /// the revoked device's own opens for it.
    private func checkRevokedReadsNoBundle(_ watched: Revocation) throws {
        let revoked = devices[watched.revoked]
        for other in devices.indices where other != watched.revoked && devices[other].exportedAt != nil {
            do {
                let report = try revoked.peer.storage.sync.importBundle(from: devices[other].bundle)
                fail("d\(watched.revoked), revoked by d\(watched.revoker), merged d\(other)'s bundle after every other device merged the revocation: \(report)")
                return
            } catch let error as CredentialStorageError where error.code == .bundleNotForThisStore {
                continue
            }
        }
    }

    /// At the next quiet round: the revoked device holds no password another device wrote after
    /// the revocation had reached every other device.
    private func checkRevokedReadNothingLater() throws {
        guard let watched = revocation, let settled = watched.settled else { return }
        let held = try devices[watched.revoked].peer.storage.allCredentials()
        let passwords = Set(held.values.flatMap { $0.values.filter { $0.persistence == .synchronizable }.map(\.password) })
        for (key, history) in changes {
            for change in history where change.sequence > settled && change.device != watched.revoked {
                if let password = change.password, passwords.contains(password) {
                    fail("d\(watched.revoked), revoked by d\(watched.revoker), holds \(key)=\(password), written by d\(change.device) at op \(change.op), after every other device had merged the revocation")
                    return
                }
            }
        }
    }

    private func retrustDue() throws {
        for (pair, due) in untrusted.sorted(by: { ($0.key.truster, $0.key.trusted) < ($1.key.truster, $1.key.trusted) }) where due <= op {
            try devices[pair.truster].peer.storage.sync.trust(devices[pair.trusted].key)
            untrusted[pair] = nil
            trace.append("\(op) d\(pair.truster) trust d\(pair.trusted)")
        }
    }

    /// Every device trusts every other (again, where an untrust, or a revocation that travelled
    /// from another device, stopped it).
    private func trustAll() throws {
        untrusted = [:]
        try trust(devices.map(\.peer), devices.map(\.peer))
    }

    // MARK: Quiet rounds

    /// Every device trusts every other again and is back online, two days pass (a reading a
    /// clock corrected backwards still carries is no longer ahead), and every device syncs twice,
    /// in a random order each time; then the checks.
    ///
    /// A revocation stays on every store that applied it until that store trusts the device
    /// again, and a bundle written before the trust still carries it: after an untrust, rounds of
    /// "trust every device, sync every device" run until no store holds a revocation.
    private func quietRound() throws {
        quietRounds += 1
        trace.append("\(op) quiet round")
        try checkRevokedReadNothingLater()
        if failed { return }
        revocation = nil
        time += 2 * Self.day
        for index in devices.indices { setClock(index) }
        for index in devices.indices { devices[index].offlineUntil = time }
        if untrustedSinceQuietRound {
            untrustedSinceQuietRound = false
            for _ in 0...(2 * devices.count) {
                try trustAll()
                for d in devices.indices.shuffled(using: &random) { try sync(d) }
                if try devices.allSatisfy({ try $0.peer.storage.sync.revokedDevices().isEmpty }) { break }
            }
        }
        try trustAll()
        for _ in 0..<2 {
            for d in devices.indices.shuffled(using: &random) { try sync(d) }
        }
        try check()
    }

    private func fail(_ message: String) {
        failed = true
        Issue.record("seed \(seed) op \(op): \(message)")
        if ProcessInfo.processInfo.environment["FLEET_SIM_TRACE"] != nil {
            print("seed \(seed) trace:\n" + trace.joined(separator: "\n"))
        }
    }

    private func check() throws {
        // Trusted again everywhere, nothing after it untrusts anyone.
        for d in devices.indices {
            let trusted = Set(try devices[d].peer.storage.sync.trustedDevices().map(\.key))
            let missing = devices.indices.filter { $0 != d && !trusted.contains(devices[$0].key) }
            if !missing.isEmpty {
                fail("d\(d) no longer trusts \(missing.map { "d\($0)" }) after every device trusted every other again")
                return
            }
        }
        // (1) One synchronizable state on every device: credentials, passwords and defaults.
        let views = try devices.map { try SyncView($0.peer.storage, spaces: spaces) }
        for d in views.indices.dropFirst() where views[d] != views[0] {
            fail("d\(d) differs from d0 after a quiet round:\n  d0: \(views[0])\n  d\(d): \(views[d])")
            return
        }
        for space in spaces.indices {
            for user in 0..<Self.userCount {
                let key = Key(space: space, user: user)
                guard let history = changes[key], !history.isEmpty else { continue }
                let held = views[0].spaces["\(spaces[space].host)/R"]?.credentials["u\(user)"]
                checkKey(key, history: history, held: held)
                if failed { return }
            }
        }
    }

    /// (2) and (3) for one credential: the fleet holds the effect of the change with the greatest
    /// clock reading; and every write is there, or replaced by a later change, or reported.
    private func checkKey(_ key: Key, history: [Change], held: String?) {
        let newest = history.max { $0.stamp < $1.stamp }!
        func describe(_ change: Change) -> String {
            "\(change.password.map { "write \($0)" } ?? "remove") by d\(change.device) at op \(change.op) (t=\(change.time), reading \(change.stamp.wall - base)/\(change.stamp.counter))"
        }
        func droppedSince(_ change: Change) -> Bool {
            dropped.contains { $0.key == key && $0.sequence > change.sequence }
        }
        if let held {
            // (2) Nothing older than the newest change comes back, a removal above all.
            guard newest.password == held else {
                let source = history.last { $0.password == held }
                fail("\(key) holds \(held) (\(source.map(describe) ?? "no acknowledged write")) but its newest change is the \(describe(newest)); last change in real time: \(describe(history.last!))")
                return
            }
        } else if newest.password != nil, !droppedSince(newest) {
            // (3) The newest write is there, unless a stale device's merge reported it dropped.
            fail("\(key) is gone but its newest change is the \(describe(newest)), and no merge reported it dropped")
            return
        }
        // (3) Every other write: replaced by a change made later in real time that reads later,
        // or reported (a conflict on its device, or dropped), or the missed interleaving.
        for write in history where write.password != nil && write.stamp != newest.stamp {
            if history.contains(where: { $0.sequence > write.sequence && $0.stamp > write.stamp }) { continue }
            if conflicts.contains(where: { $0.key == key && $0.device == write.device && $0.sequence > write.sequence }) { continue }
            if droppedSince(write) { continue }
            let winners = history.filter { $0.stamp > write.stamp && $0.device != write.device }
            let missed = winners.contains { winner in
                merges.contains { $0.importer == write.device && $0.signer == winner.device && $0.sequence > write.sequence && $0.exportedAt < winner.sequence }
            }
            if missed { continue }
            fail("\(key): the \(describe(write)) lost to earlier changes (\(winners.map(describe).joined(separator: "; "))) without a conflict reported on d\(write.device)")
            return
        }
    }
}
