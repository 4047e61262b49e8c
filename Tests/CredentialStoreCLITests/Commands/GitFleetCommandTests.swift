import Foundation
import Testing

/// `credstore sync` through a real git repository, as a user runs it: machines (sandboxes, each
/// with its own home) share one bare repository, and each round on a machine is `git pull
/// --rebase`, `credstore sync` on the clone, `git add -A`, a commit when something changed, and a
/// push (pulled again and retried when another machine pushed first).
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/git"), "needs git (run .ci/setup)"))
struct GitFleetCommandTests {
    /// Machines A, B, C… with their clones of one bare repository; each runs credstore on its own
    /// clock, moved by faketime where a test sets an offset.
    final class GitFleet {
        /// What one machine's round did.
        struct Round {
            var report: [String: Any]
            var stderr: String
            var committed: Bool

            /// `total.added` of the sync report.
            var added: Int? { (report["total"] as? [String: Any])?["added"] as? Int }
        }

        static let faketime = URL(fileURLWithPath: "/usr/bin/faketime")

        /// faketime moves the clock through the dynamic loader (LD_PRELOAD): a statically linked
        /// binary under test (the shipped one) reads the real clock whatever faketime says.
        static let clocksCanMove = FileManager.default.isExecutableFile(atPath: faketime.path) && asksForALoader(Sandbox.binary)

        let machines: [Sandbox]
        let remote: URL
        /// Each machine's clock offset as `faketime -f` takes it (`+200d`, `-23h`); nil: the real clock.
        var offsets: [String?]

        init(count: Int) throws {
            machines = try (0..<count).map { _ in try Sandbox() }
            offsets = Array(repeating: nil, count: count)
            remote = machines[0].root.appendingPathComponent("remote.git", isDirectory: true)
            try mustGit(0, ["-c", "init.defaultBranch=main", "init", "-q", "--bare", remote.path], inClone: false)
            // The first machine starts the repository; the others clone what it pushed.
            try mustGit(0, ["-c", "init.defaultBranch=main", "clone", "-q", remote.path, clone(0).path], inClone: false)
            try Data("Synced credentials: one bundle per machine, written by credstore sync.\n".utf8)
                .write(to: clone(0).appendingPathComponent("README"))
            try mustGit(0, ["add", "README"])
            try mustGit(0, ["commit", "-q", "-m", "Start the credentials repository"])
            try mustGit(0, ["push", "-q", "origin", "main"])
            for index in 1..<count {
                try mustGit(index, ["clone", "-q", remote.path, clone(index).path], inClone: false)
            }
        }

        func name(_ index: Int) -> String { ["A", "B", "C", "D"][index] }

        func clone(_ index: Int) -> URL { machines[index].root.appendingPathComponent("credentials", isDirectory: true) }

        /// `git ARGUMENTS` as machine `index`'s user, in its clone unless `inClone` is false.
        func git(_ index: Int, _ arguments: [String], inClone: Bool = true) throws -> RunResult {
            let identity = ["GIT_AUTHOR_NAME": "Machine \(name(index))", "GIT_AUTHOR_EMAIL": "\(name(index).lowercased())@example.com",
                            "GIT_COMMITTER_NAME": "Machine \(name(index))", "GIT_COMMITTER_EMAIL": "\(name(index).lowercased())@example.com"]
            return try machines[index].runProgram(URL(fileURLWithPath: "/usr/bin/git"), (inClone ? ["-C", clone(index).path] : []) + arguments,
                                                  environment: identity.merging(["GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"]) { $1 })
        }

        @discardableResult
        func mustGit(_ index: Int, _ arguments: [String], inClone: Bool = true) throws -> RunResult {
            let result = try git(index, arguments, inClone: inClone)
            #expect(result.status == 0, "git \(arguments.joined(separator: " ")) on \(name(index)) failed: \(result.stderr)")
            return result
        }

        /// `credstore ARGUMENTS` on machine `index`'s default store, on its clock.
        func credstore(_ index: Int, _ arguments: [String], stdin: String? = nil) throws -> RunResult {
            guard let offset = offsets[index] else { return try machines[index].run(arguments, stdin: stdin) }
            return try machines[index].runProgram(Self.faketime, ["-f", offset, Sandbox.binary.path] + arguments, stdin: stdin)
        }

        func add(_ index: Int, _ url: String, user: String, password: String) throws {
            let added = try credstore(index, ["add", url, "--user", user, "--persistence", "synchronizable"], stdin: password + "\n")
            #expect(added.status == 0, "add on \(name(index)) failed: \(added.stderr)")
        }

        /// What `credstore get URL --user USER` answers on machine `index`: the password, or nil
        /// when it exits 1 (nothing there).
        func password(_ index: Int, _ url: String, user: String) throws -> String? {
            let got = try credstore(index, ["get", url, "--user", user])
            #expect([0, 1].contains(got.status), "get on \(name(index)) failed: \(got.stderr)")
            return got.status == 0 ? String(got.stdout.dropLast()) : nil
        }

        /// Machine `index`'s device key and id, as `credstore device show --json` gives them.
        func device(_ index: Int) throws -> (key: String, id: String) {
            let shown = try credstore(index, ["device", "show", "--json"])
            #expect(shown.status == 0, "device show on \(name(index)) failed: \(shown.stderr)")
            let object = try jsonObject(shown.stdout)
            return (try #require(object["publicKey"] as? String), try #require(object["deviceId"] as? String))
        }

        func trustEachOther() throws {
            let keys = try machines.indices.map { index in
                let made = try credstore(index, ["init"])
                #expect(made.status == 0, "init on \(name(index)) failed: \(made.stderr)")
                return try device(index).key
            }
            for index in machines.indices {
                for (other, key) in keys.enumerated() where other != index {
                    let trusted = try credstore(index, ["device", "trust", key])
                    #expect(trusted.status == 0, "trust on \(name(index)) failed: \(trusted.stderr)")
                }
            }
        }

        /// Pulls, syncs and commits what changed, without pushing.
        func prepare(_ index: Int) throws -> Round {
            try mustGit(index, ["pull", "-q", "--rebase"])
            let synced = try credstore(index, ["sync", clone(index).path, "--json"])
            #expect(synced.status == 0, "sync on \(name(index)) failed: \(synced.stderr)")
            try mustGit(index, ["add", "-A"])
            let changed = try mustGit(index, ["status", "--porcelain"]).stdout
            if !changed.isEmpty {
                try mustGit(index, ["commit", "-q", "-m", "Sync credentials from machine \(name(index))"])
            }
            let report = (try? jsonObject(synced.stdout)) ?? [:]
            return Round(report: report, stderr: synced.stderr, committed: !changed.isEmpty)
        }

        /// Pushes; when another machine pushed first (a non-fast-forward), pulls and pushes again.
        func push(_ index: Int) throws {
            for _ in 0..<3 {
                let pushed = try git(index, ["push", "-q", "origin", "main"])
                if pushed.status == 0 { return }
                #expect(pushed.stderr.contains("fetch first") || pushed.stderr.contains("non-fast-forward"),
                        "push on \(name(index)) failed: \(pushed.stderr)")
                try mustGit(index, ["pull", "-q", "--rebase"])
            }
            Issue.record("machine \(name(index)) could not push in three tries")
        }

        @discardableResult
        func round(_ index: Int) throws -> Round {
            let round = try prepare(index)
            try push(index)
            return round
        }

        /// Rounds on the machines in `order`, in turn.
        @discardableResult
        func rounds(_ order: [Int]) throws -> [(machine: Int, round: Round)] {
            try order.map { ($0, try round($0)) }
        }

        /// The commit the shared repository's main branch is at.
        func remoteHead() throws -> String {
            try mustGit(0, ["--git-dir", remote.path, "rev-parse", "main"], inClone: false).stdout
        }

        /// Whether an ELF file names a program interpreter (a PT_INTERP program header): a
        /// dynamically linked binary does, a static one does not.
        static func asksForALoader(_ binary: URL) -> Bool {
            guard let handle = try? FileHandle(forReadingFrom: binary) else { return false }
            defer { try? handle.close() }
            guard let header = try? handle.read(upToCount: 64), header.count == 64,
                  header.prefix(4).elementsEqual([0x7F, 0x45, 0x4C, 0x46]), header[4] == 2, header[5] == 1 else { return false }
            func integer(_ bytes: Data, _ offset: Int, _ size: Int) -> Int {
                (0..<size).reduce(0) { $0 | Int(bytes[bytes.startIndex + offset + $1]) << (8 * $1) }
            }
            let (table, entrySize, count) = (integer(header, 32, 8), integer(header, 54, 2), integer(header, 56, 2))
            guard entrySize >= 4, (try? handle.seek(toOffset: UInt64(table))) != nil,
                  let entries = try? handle.read(upToCount: entrySize * count), entries.count == entrySize * count else { return false }
            return (0..<count).contains { integer(entries, $0 * entrySize, 4) == 3 }
        }
    }

    private let url = "https://api.example.com"

    // MARK: A quiet round commits nothing; an explicit default still travels

    @Test func aQuietRoundLeavesEveryCloneCleanAndAnExplicitDefaultStillTravels() throws {
        let fleet = try GitFleet(count: 3)
        try fleet.trustEachOther()
        try fleet.add(0, url, user: "alice", password: "pa")
        try fleet.add(0, url, user: "bob", password: "pb")
        try fleet.add(1, "https://git.example.com", user: "carol", password: "pc")

        // Everyone syncs at once: all pull before anyone pushes, so B's and C's pushes are
        // refused as non-fast-forward and go through after a pull.
        let first = try (0..<3).map(fleet.prepare)
        for index in 0..<3 { try fleet.push(index) }
        #expect(first.allSatisfy { $0.committed }, "each machine's first bundle is a commit")
        try fleet.rounds([0, 1, 2])
        for index in 0..<3 {
            let found = [try fleet.password(index, url, user: "alice"), try fleet.password(index, url, user: "bob"),
                         try fleet.password(index, "https://git.example.com", user: "carol")]
            #expect(found == ["pa", "pb", "pc"], "machine \(fleet.name(index)) has \(found)")
        }
        try expectQuietRound(fleet)

        // B chooses bob; then A chooses alice, already its default, before it pulls B's choice.
        // A's choice is the later one, so it wins everywhere, and it is a commit of its own.
        #expect(try fleet.credstore(1, ["default", url, "--user", "bob"]).status == 0)
        #expect(try fleet.round(1).committed, "B's choice is a change")
        #expect(try fleet.password(0, url, user: "alice") == "pa")
        #expect(try fleet.credstore(0, ["get", url]).stdout == "pa\n", "alice is A's default before it chooses her")
        let chose = try fleet.credstore(0, ["default", url, "--user", "alice"])
        #expect(chose.status == 0, "\(chose.stderr)")
        let chosen = try fleet.round(0)
        #expect(chosen.committed, "choosing the default it had is still a change: \(chosen.report)")
        try fleet.rounds([2, 1])
        for index in 0..<3 {
            let got = try fleet.credstore(index, ["get", url])
            #expect(got.stdout == "pa\n", "machine \(fleet.name(index)) answers \(got.stdout) \(got.stderr)")
        }
        try expectQuietRound(fleet)
    }

    /// A round on every machine commits nothing, leaves every clone clean and the shared branch
    /// where it was.
    private func expectQuietRound(_ fleet: GitFleet) throws {
        let head = try fleet.remoteHead()
        for index in fleet.machines.indices {
            let round = try fleet.round(index)
            #expect(!round.committed && round.report["changed"] as? Bool == false,
                    "a quiet round on \(fleet.name(index)) made a commit: \(round.report) \(round.stderr)")
            let status = try fleet.mustGit(index, ["status", "--porcelain"]).stdout
            #expect(status.isEmpty, "machine \(fleet.name(index))'s clone is not clean: \(status)")
        }
        #expect(try fleet.remoteHead() == head, "a quiet round moved the shared branch")
    }

    // MARK: Deleted stays deleted

    /// A removes alice while B is away; B returns 200 days later, first or last among the machines
    /// that sync that day. However the rounds go, alice never comes back, and bob stays.
    @Test(.enabled(if: GitFleet.clocksCanMove, "needs /usr/bin/faketime and a dynamically linked credstore (faketime moves a static binary's clock not at all)"),
          arguments: [true, false])
    func aDeletionStaysDeletedWhenAMachineReturnsAfter200Days(returnerFirst: Bool) throws {
        let fleet = try GitFleet(count: 3)
        try fleet.trustEachOther()
        try fleet.add(0, url, user: "alice", password: "pa")
        try fleet.add(0, url, user: "bob", password: "pb")
        try fleet.rounds([0, 1, 2, 0, 1, 2])
        #expect(try fleet.password(1, url, user: "alice") == "pa", "B had alice when it went away")

        let removed = try fleet.credstore(0, ["remove", url, "--user", "alice", "--synchronizable"])
        #expect(removed.status == 0, "\(removed.stderr)")
        var rounds = try fleet.rounds([0, 2])
        // A and C keep syncing while B is away.
        fleet.offsets = ["+100d", nil, "+100d"]
        rounds += try fleet.rounds([0, 2])
        fleet.offsets = ["+200d", "+200d", "+200d"]
        let back = try fleet.rounds(returnerFirst ? [1, 0, 2, 1, 0, 2] : [0, 2, 1, 0, 2, 1])
        rounds += back
        if let returned = back.first(where: { $0.machine == 1 })?.round {
            // A and C kept the deletion for B, which had not merged it: it reaches B as any removal.
            #expect((returned.report["total"] as? [String: Any])?["removed"] as? Int == 1, "B did not get the removal: \(returned.report)")
        }

        for (index, round) in rounds {
            #expect(round.added == 0, "sync on \(fleet.name(index)) added something: \(round.report) \(round.stderr)")
        }
        for index in 0..<3 {
            #expect(try fleet.password(index, url, user: "alice") == nil, "alice came back on \(fleet.name(index))")
            #expect(try fleet.password(index, url, user: "bob") == "pb", "bob is lost on \(fleet.name(index))")
        }
    }

    /// B removes alice and commits its bundle, but pushes only 200 days later, while A and C went
    /// on syncing with alice: neither merged B's removal, so B still holds it, and it reaches A
    /// and C when B is back, however the rounds go.
    @Test(.enabled(if: GitFleet.clocksCanMove, "needs /usr/bin/faketime and a dynamically linked credstore (faketime moves a static binary's clock not at all)"))
    func aRemovalPushedOnly200DaysLaterStillReachesTheOthers() throws {
        let fleet = try GitFleet(count: 3)
        try fleet.trustEachOther()
        try fleet.add(0, url, user: "alice", password: "pa")
        try fleet.add(0, url, user: "bob", password: "pb")
        try fleet.rounds([0, 1, 2, 0, 1, 2])

        let removed = try fleet.credstore(1, ["remove", url, "--user", "alice", "--synchronizable"])
        #expect(removed.status == 0, "\(removed.stderr)")
        // B syncs and commits, but its push waits until it is back.
        _ = try fleet.prepare(1)
        fleet.offsets = ["+100d", nil, "+100d"]
        try fleet.rounds([0, 2, 0])
        fleet.offsets = ["+200d", "+200d", "+200d"]
        let back = try fleet.rounds([1, 1, 0, 2, 0, 2, 1])
        for (index, round) in back {
            #expect(round.added == 0, "sync on \(fleet.name(index)) added something: \(round.report) \(round.stderr)")
        }
        for index in 0..<3 {
            #expect(try fleet.password(index, url, user: "alice") == nil, "alice came back on \(fleet.name(index))")
            #expect(try fleet.password(index, url, user: "bob") == "pb", "bob is lost on \(fleet.name(index))")
        }
    }

    /// A's clock is 23 hours slow, so its deletion is stamped 23 hours early; B returns after 179
    /// and a half days, while its old bundle (alice alive) is still accepted. C, on a right clock,
    /// syncs first and must still remember the deletion.
    @Test(.enabled(if: GitFleet.clocksCanMove, "needs /usr/bin/faketime and a dynamically linked credstore (faketime moves a static binary's clock not at all)"))
    func aDeletionFromASlowClockOutlivesEveryBundleStillAccepted() throws {
        let fleet = try GitFleet(count: 3)
        fleet.offsets = ["-23h", nil, nil]
        try fleet.trustEachOther()
        // Only A writes, so A's own slow clock stamps every change.
        try fleet.add(0, url, user: "alice", password: "pa")
        try fleet.add(0, url, user: "bob", password: "pb")
        try fleet.rounds([0, 1, 2, 0, 1, 2])
        #expect(try fleet.password(1, url, user: "alice") == "pa", "B had alice when it went away")

        let removed = try fleet.credstore(0, ["remove", url, "--user", "alice", "--synchronizable"])
        #expect(removed.status == 0, "\(removed.stderr)")
        var rounds = try fleet.rounds([0, 2])
        // 179 and a half days later; A still 23 hours slow.
        fleet.offsets = ["+4285h", "+4308h", "+4308h"]
        rounds += try fleet.rounds([2, 0, 1, 2, 0, 1])

        for (index, round) in rounds {
            #expect(round.added == 0, "sync on \(fleet.name(index)) added something: \(round.report) \(round.stderr)")
        }
        for index in 0..<3 {
            #expect(try fleet.password(index, url, user: "alice") == nil, "alice came back on \(fleet.name(index))")
            #expect(try fleet.password(index, url, user: "bob") == "pb", "bob is lost on \(fleet.name(index))")
        }
    }

    // MARK: Clocks

    /// C's clock is 23 hours fast, B's 2 hours slow, A's right. A merges C's change and relays it:
    /// B, 25 hours behind C, holds that change back and merges the rest of A's bundle, blaming C's
    /// clock (the machine that writes C's bundle), never A's. B's own change still reaches A, and
    /// once C's clock is right again every machine holds C's change.
    @Test(.enabled(if: GitFleet.clocksCanMove, "needs /usr/bin/faketime and a dynamically linked credstore (faketime moves a static binary's clock not at all)"))
    func aFastClockRelayedByARightOneIsBlamedOnItsOwnMachine() throws {
        let fleet = try GitFleet(count: 3)
        fleet.offsets = [nil, "-2h", "+23h"]
        try fleet.trustEachOther()
        let (aID, cID) = (try fleet.device(0).id, try fleet.device(2).id)
        try fleet.add(2, url, user: "carol", password: "pc")
        try fleet.add(0, url, user: "alice", password: "pa")
        try fleet.rounds([2, 0])
        try fleet.add(1, url, user: "bob", password: "pb")

        // B pulls and syncs: A's bundle merges (but for C's change), C's own is refused.
        try fleet.mustGit(1, ["pull", "-q", "--rebase"])
        let synced = try fleet.credstore(1, ["sync", fleet.clone(1).path])
        #expect(synced.stderr.contains(cID), "the message does not name C's machine: \(synced.stderr)")
        #expect(!synced.stderr.contains("writes \(aID).csbundle"), "A is blamed for C's clock: \(synced.stderr)")
        #expect(!synced.stderr.contains("\(aID).csbundle: refused") && !synced.stderr.contains("\(aID).csbundle is"), "A's bundle was refused: \(synced.stderr)")
        #expect(try fleet.password(1, url, user: "alice") == "pa", "A's own change did not reach B")
        #expect(try fleet.password(1, url, user: "carol") == nil, "C's change, 25 hours ahead of B, is held back")
        try fleet.mustGit(1, ["add", "-A"])
        try fleet.mustGit(1, ["commit", "-q", "-m", "Sync credentials from machine B"])
        try fleet.push(1)
        try fleet.round(0)
        #expect(try fleet.password(0, url, user: "bob") == "pb", "B's change did not reach A")

        // C's clock is put right; a day later every machine agrees.
        fleet.offsets = ["+1d", "+1d", "+1d"]
        try fleet.rounds([2, 0, 1, 2, 0, 1])
        for index in 0..<3 {
            for (user, password) in [("alice", "pa"), ("bob", "pb"), ("carol", "pc")] {
                #expect(try fleet.password(index, url, user: user) == password, "\(user) on \(fleet.name(index))")
            }
        }
    }

    /// A edits at noon; B, whose clock is 23 hours slow, edits the same credential six hours
    /// later. B's edit reads earlier and loses on every machine: B's sync names it, and its value
    /// stays in B's history.
    @Test(.enabled(if: GitFleet.clocksCanMove, "needs /usr/bin/faketime and a dynamically linked credstore (faketime moves a static binary's clock not at all)"))
    func aLaterEditOnASlowClockThatLosesIsNamedAndKept() throws {
        let fleet = try GitFleet(count: 2)
        fleet.offsets = [nil, "-23h"]
        try fleet.trustEachOther()
        try fleet.add(0, url, user: "alice", password: "first")
        try fleet.rounds([0, 1, 0])
        try fleet.add(0, url, user: "alice", password: "from-a")
        try fleet.round(0)
        fleet.offsets = ["+6h", "-17h"]
        try fleet.add(1, url, user: "alice", password: "from-b-later")
        let synced = try fleet.round(1)
        #expect(synced.stderr.contains("credstore: conflict: alice's credential") && synced.stderr.contains("this machine's version is kept"),
                "B's losing edit is not named: \(synced.stderr)")
        try fleet.round(0)
        for index in 0..<2 {
            #expect(try fleet.password(index, url, user: "alice") == "from-a")
        }
        let history = try fleet.credstore(1, ["history", url, "--user", "alice", "--show", "1"])
        #expect(history.status == 0, "\(history.stderr)")
        #expect(history.stdout.contains("from-b-later"), "B's value is not in its history: \(history.stdout)")
    }

    // MARK: A revocation travels through the repository

    /// A stops trusting C, then adds a password. The revocation reaches B through A's bundle, B
    /// stops sealing to C as A has, and C reads nothing written after it.
    @Test func aRevocationOnOneMachineTravelsThroughTheRepository() throws {
        let fleet = try GitFleet(count: 3)
        try fleet.trustEachOther()
        try fleet.add(0, url, user: "alice", password: "pa")
        try fleet.rounds([0, 1, 2, 0, 1, 2])
        #expect(try fleet.password(2, url, user: "alice") == "pa", "C was one of the fleet")
        let (a, b, c) = (try fleet.device(0), try fleet.device(1), try fleet.device(2))

        let untrusted = try fleet.credstore(0, ["device", "untrust", c.key])
        #expect(untrusted.status == 0, "\(untrusted.stderr)")
        try fleet.add(0, url, user: "dave", password: "after-the-revocation")
        // A, B, C in that order, then any order.
        let rounds = try fleet.rounds([0, 1, 2, 1, 2, 0, 2])

        #expect(try fleet.password(1, url, user: "dave") == "after-the-revocation", "B is still one of the fleet")
        let got = try fleet.credstore(2, ["get", url, "--user", "dave"])
        #expect(got.status == 1 && got.stderrIsOneErrorLine && !got.stdout.contains("after-the-revocation"),
                "C reads what was written after it was revoked: status \(got.status), \(got.stdout) \(got.stderr)")
        let skipped = try #require(rounds.last { $0.machine == 2 }?.round.report["skipped"] as? [String: String])
        for (name, id) in [("A", a.id), ("B", b.id)] {
            #expect(skipped["\(id).csbundle"]?.contains("not sealed to this store") == true,
                    "\(name)'s bundle is still sealed to C: \(skipped)")
        }

        // B lists C as revoked, by A; A lists it as revoked by this device.
        let listed = try fleet.credstore(1, ["device", "list", "--json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let entry = try jsonArray(listed.stdout).first { $0["publicKey"] as? String == c.key }
        #expect(entry?["status"] as? String == "revoked" && entry?["revokedBy"] as? String == a.key && entry?["revoked"] is String,
                "B's device list: \(listed.stdout)")
        for (index, revoker) in [(1, a.key), (0, "this device")] {
            let table = try fleet.credstore(index, ["device", "list"])
            let lines = table.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
            let heading = try #require(lines.firstIndex(of: "REVOKED KEY REVOKED BY WHEN"), "\(fleet.name(index)): \(table.stdout) \(table.stderr)")
            #expect(lines[(heading + 1)...].contains { $0.hasPrefix("\(c.key) \(revoker) ") },
                    "\(fleet.name(index)) does not list C as revoked by \(revoker): \(table.stdout)")
        }
    }
}
