import CredentialStore
import CredentialStoreTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `credstore export`, `import`, `device` and `sync`: synchronizable credentials between machines.
struct SyncCommandTests {
    /// Three machines, each with its own store, sharing one folder.
    final class Fleet {
        let machines: [Sandbox]
        let shared: URL

        init() throws {
            machines = try (0..<3).map { _ in try Sandbox() }
            shared = machines[0].root.appendingPathComponent("shared", isDirectory: true)
            try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        }

        func publicKey(_ index: Int) throws -> String {
            // `device show` only reads: a new machine's store is made first.
            #expect(try machines[index].run(["init"] + machines[index].storeArguments).status == 0)
            let shown = try machines[index].run(["device", "show", "--json"] + machines[index].storeArguments)
            #expect(shown.status == 0, "device show failed: \(shown.stderr)")
            return try #require(try jsonObject(shown.stdout)["publicKey"] as? String)
        }

        /// Every machine trusts every other.
        func trustEachOther() throws {
            let keys = try (0..<3).map(publicKey)
            for (index, machine) in machines.enumerated() {
                for (other, key) in keys.enumerated() where other != index {
                    let trusted = try machine.run(["device", "trust", key] + machine.storeArguments)
                    #expect(trusted.status == 0, "trust failed: \(trusted.stderr)")
                }
            }
        }

        func sync(_ index: Int) throws -> RunResult {
            let result = try machines[index].run(["sync", shared.path, "--json"] + machines[index].storeArguments)
            #expect(result.status == 0, "sync failed: \(result.stderr)")
            return result
        }

        func passwords(_ index: Int, _ url: String, users: [String]) throws -> [String: String] {
            var found: [String: String] = [:]
            for user in users {
                let got = try machines[index].run(["get", url, "--user", user] + machines[index].storeArguments)
                if got.status == 0 { found[user] = String(got.stdout.dropLast()) }
            }
            return found
        }
    }

    @Test func threeStoresConvergeThroughASharedFolder() throws {
        let fleet = try Fleet()
        try fleet.trustEachOther()
        let url = "https://api.example.com"
        try fleet.machines[0].add(url, user: "alice", password: "from-0", ["--persistence", "synchronizable"])
        try fleet.machines[1].add(url, user: "bob", password: "from-1", ["--persistence", "synchronizable"])
        try fleet.machines[2].add(url, user: "carol", password: "local-only")

        // Two rounds in any order: every synchronizable credential reaches every machine.
        for round in [[0, 1, 2], [2, 0, 1]] {
            for index in round { _ = try fleet.sync(index) }
        }
        for index in 0..<3 {
            let found = try fleet.passwords(index, url, users: ["alice", "bob", "carol"])
            #expect(found["alice"] == "from-0" && found["bob"] == "from-1", "machine \(index): \(found)")
        }
        #expect(try fleet.passwords(0, url, users: ["carol"]).isEmpty, "a permanent credential stays home")

        // A deletion travels too.
        let removed = try fleet.machines[1].run(["remove", url, "--user", "alice", "--synchronizable"] + fleet.machines[1].storeArguments)
        #expect(removed.status == 0)
        for index in [1, 0, 2, 1] { _ = try fleet.sync(index) }
        for index in 0..<3 {
            #expect(try fleet.passwords(index, url, users: ["alice"]).isEmpty, "machine \(index) still has alice")
        }
        let report = try jsonObject(fleet.sync(0).stdout)
        #expect((report["wrote"] as? String)?.hasSuffix(".csbundle") == true)
    }

    /// Whatever the store takes, a bundle carries: the longest user and password the store
    /// accepts export, and a password one byte longer is refused on the way in (here by
    /// `import --from`, which has no line limit) instead of blocking every later export.
    @Test func theLongestCredentialTheStoreTakesStillExports() throws {
        let sandbox = try Sandbox()
        let user = String(repeating: "u", count: 4096)
        let longest = String(repeating: "p", count: 1_000_000)
        let csv = sandbox.root.appendingPathComponent("export.csv")
        try Data("name,url,username,password\nx,https://\(String(repeating: "h", count: 60)).example.com,\(user),\(longest)\ny,https://c.example.com,u,\(longest)p\n".utf8).write(to: csv)
        let imported = try sandbox.run(["import", csv.path, "--from", "chrome", "--persistence", "synchronizable", "--json"] + sandbox.storeArguments)
        #expect(imported.status == 0, "import failed: \(imported.stderr)")
        #expect(try jsonObject(imported.stdout)["added"] as? Int == 1)
        #expect(try jsonObject(imported.stdout)["skipped"] as? Int == 1)
        #expect(!imported.stdout.contains(longest))

        let bundle = sandbox.root.appendingPathComponent("out.csbundle").path
        let exported = try sandbox.run(["export", bundle] + sandbox.storeArguments,
                                       environment: ["CREDSTORE_BUNDLE_PASSPHRASE": "bundle pass"])
        #expect(exported.status == 0, "export failed: \(exported.stderr)")
    }

    @Test func exportAndImportWithAPassphraseAndADryRun() throws {
        let laptop = try Sandbox(), desktop = try Sandbox()
        try laptop.add("https://git.example.com", user: "dev", password: "token-1", ["--persistence", "synchronizable"])
        let bundle = laptop.root.appendingPathComponent("out.csbundle").path
        let passphrase = ["CREDSTORE_BUNDLE_PASSPHRASE": "correct horse bundle"]
        let exported = try laptop.run(["export", bundle] + laptop.storeArguments, environment: passphrase)
        #expect(exported.status == 0, "export failed: \(exported.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: bundle)).range(of: Data("token-1".utf8)) == nil)

        let dry = try desktop.run(["import", bundle, "--dry-run", "--json"] + desktop.storeArguments, environment: passphrase)
        #expect(dry.status == 0, "dry run failed: \(dry.stderr)")
        #expect(try jsonObject(dry.stdout)["added"] as? Int == 1)
        #expect(try desktop.run(["get", "https://git.example.com"] + desktop.storeArguments).status == 1, "a dry run changes nothing")

        let imported = try desktop.run(["import", bundle, "--json"] + desktop.storeArguments, environment: passphrase)
        let counts = try jsonObject(imported.stdout).filter { ["added", "updated", "removed", "unchanged"].contains($0.key) }
        #expect(counts.mapValues { $0 as? Int } == ["added": 1, "updated": 0, "removed": 0, "unchanged": 0])
        #expect((try jsonObject(imported.stdout)["conflicts"] as? [Any])?.isEmpty == true, "no change here lost")
        #expect(try desktop.run(["get", "https://git.example.com"] + desktop.storeArguments).stdout == "token-1\n")

        let wrong = try desktop.run(["import", bundle] + desktop.storeArguments, environment: ["CREDSTORE_BUNDLE_PASSPHRASE": "wrong"])
        #expect(wrong.status == 77 && wrong.stderrIsOneErrorLine && !wrong.stderr.contains("wrong\n"))
        // No passphrase at all, and no terminal to ask on: a key missing (77), said as such.
        let missing = try desktop.run(["import", bundle] + desktop.storeArguments)
        #expect(missing.status == 77 && missing.stderr.contains("is locked with a passphrase; set CREDSTORE_BUNDLE_PASSPHRASE"), "\(missing.stderr)")
    }

    @Test func aDamagedOrForeignBundleIsRefusedWithItsExitCode() throws {
        let fleet = try Fleet()
        try fleet.machines[0].add("https://a.example.com", user: "alice", password: "pw", ["--persistence", "synchronizable"])
        let bundle = fleet.shared.appendingPathComponent("for-1.csbundle")
        let exported = try fleet.machines[0].run(["export", bundle.path, "--recipient", try fleet.publicKey(1)] + fleet.machines[0].storeArguments)
        #expect(exported.status == 0, "export failed: \(exported.stderr)")

        let foreign = try fleet.machines[2].run(["import", bundle.path] + fleet.machines[2].storeArguments)
        #expect(foreign.status == 77 && foreign.stderrIsOneErrorLine, "not for this store: \(foreign.stderr)")
        let untrusted = try fleet.machines[1].run(["import", bundle.path] + fleet.machines[1].storeArguments)
        #expect(untrusted.status == 77 && untrusted.stderr.contains("does not trust"), "\(untrusted.stderr)")

        var bytes = [UInt8](try Data(contentsOf: bundle))
        bytes[bytes.count / 2] ^= 0x01
        try Data(bytes).write(to: bundle)
        try fleet.machines[1].run(["device", "trust", try fleet.publicKey(0)] + fleet.machines[1].storeArguments)
        let damaged = try fleet.machines[1].run(["import", bundle.path] + fleet.machines[1].storeArguments)
        #expect(damaged.status == 65 && damaged.stderrIsOneErrorLine, "\(damaged.stderr)")
        #expect(try fleet.machines[1].run(["list", "--json"] + fleet.machines[1].storeArguments).stdout == "[]\n")
    }

    // MARK: Untrusting a device, end to end

    @Test func anUntrustedDeviceGetsNoLaterBundleAndItsBundlesAreRefused() throws {
        let fleet = try Fleet()
        try fleet.trustEachOther()
        let url = "https://api.example.com"
        try fleet.machines[0].add(url, user: "alice", password: "before", ["--persistence", "synchronizable"])
        for index in [0, 1, 2, 0] { _ = try fleet.sync(index) }
        #expect(try fleet.passwords(2, url, users: ["alice"]) == ["alice": "before"])

        // device list: every trusted key, when it was trusted, when its last bundle was merged.
        let lost = try fleet.publicKey(2)
        let listed = try fleet.machines[0].run(["device", "list", "--json"] + fleet.machines[0].storeArguments)
        #expect(listed.status == 0, "\(listed.stderr)")
        let devices = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        #expect(Set(devices.compactMap { $0["publicKey"] as? String }) == [try fleet.publicKey(1), lost])
        #expect(devices.allSatisfy { ($0["trusted"] as? String)?.hasSuffix("Z") == true && ($0["lastMerged"] as? String)?.hasSuffix("Z") == true },
                "\(listed.stdout)")
        let table = try fleet.machines[0].run(["device", "list"] + fleet.machines[0].storeArguments)
        #expect(table.status == 0 && table.stdout.hasPrefix("KEY") && table.stdout.contains(lost), "\(table.stdout)")

        // Machine 2 is lost: the other two untrust it; each lists it as revoked by itself.
        for index in [0, 1] {
            let untrusted = try fleet.machines[index].run(["device", "untrust", lost] + fleet.machines[index].storeArguments)
            #expect(untrusted.status == 0, "\(untrusted.stderr)")
            let after = try fleet.machines[index].run(["device", "list", "--json"] + fleet.machines[index].storeArguments)
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [[String: Any]])
            let row = rows.first { $0["publicKey"] as? String == lost }
            #expect(row?["status"] as? String == "revoked", "\(after.stdout)")
            #expect(row?["revokedBy"] as? String == (try fleet.publicKey(index)), "\(after.stdout)")
        }
        let again = try fleet.machines[0].run(["device", "untrust", lost] + fleet.machines[0].storeArguments)
        #expect(again.status == 1 && again.stderrIsOneErrorLine, "\(again.stderr)")

        // A password changed after the untrust never reaches it…
        let changed = try fleet.machines[0].run(["add", url, "--user", "alice", "--persistence", "synchronizable"]
            + fleet.machines[0].storeArguments, stdin: "after\n")
        #expect(changed.status == 0, "\(changed.stderr)")
        _ = try fleet.sync(0)
        _ = try fleet.sync(1)
        let lostSync = try fleet.machines[2].run(["sync", fleet.shared.path] + fleet.machines[2].storeArguments)
        #expect(lostSync.status == 0, "not sealed to it: skipped with a note, \(lostSync.stderr)")
        #expect(lostSync.stderr.contains("device trust"), "the note says what to do: \(lostSync.stderr)")
        #expect(try fleet.passwords(2, url, users: ["alice"]) == ["alice": "before"])
        #expect(try fleet.passwords(1, url, users: ["alice"]) == ["alice": "after"])

        // …and what it writes is refused by the others.
        try fleet.machines[2].add(url, user: "mallory", password: "planted", ["--persistence", "synchronizable"])
        _ = try fleet.machines[2].run(["sync", fleet.shared.path] + fleet.machines[2].storeArguments)
        for index in [0, 1] {
            let merged = try fleet.machines[index].run(["sync", fleet.shared.path] + fleet.machines[index].storeArguments)
            #expect(merged.status == 0 && merged.stderr.contains("signed by a revoked device"), "\(merged.stderr)")
            #expect(try fleet.passwords(index, url, users: ["mallory"]).isEmpty)
        }
        let lostID = try #require(try jsonObject(fleet.machines[2].run(["device", "show", "--json"] + fleet.machines[2].storeArguments).stdout)["deviceId"] as? String)
        let direct = try fleet.machines[0].run(["import", fleet.shared.appendingPathComponent("\(lostID).csbundle").path] + fleet.machines[0].storeArguments)
        #expect(direct.status == 77 && direct.stderr.contains("signed by a revoked device"), "\(direct.stderr)")
    }

    // MARK: A skipped bundle's note says on which machine the fix is

    @Test func aSkippedBundlesNoteSaysOnWhichMachineToRunDeviceTrust() throws {
        let fleet = try Fleet()
        let (key0, key1) = (try fleet.publicKey(0), try fleet.publicKey(1))
        func deviceID(_ index: Int) throws -> String {
            try #require(try jsonObject(fleet.machines[index].run(["device", "show", "--json"] + fleet.machines[index].storeArguments).stdout)["deviceId"] as? String)
        }
        // Machine 1 trusts machine 0; machine 0 trusts nobody yet.
        #expect(try fleet.machines[1].run(["device", "trust", key0] + fleet.machines[1].storeArguments).status == 0)
        for index in [0, 1] {
            try fleet.machines[index].add("https://a.example.com", user: "u\(index)", password: "pw", ["--persistence", "synchronizable"])
        }
        func sync(_ index: Int) throws -> RunResult {
            let result = try fleet.machines[index].run(["sync", fleet.shared.path] + fleet.machines[index].storeArguments)
            #expect(result.status == 0, "skipping is not failing: \(result.stderr)")
            return result
        }
        _ = try sync(0)

        // Machine 0's bundle is sealed to machine 0 alone: the fix is on machine 0, with machine
        // 1's key in full, ready to paste; exporting again there would not help.
        let notSealed = try sync(1).stderr
        #expect(notSealed.hasPrefix("credstore: skipped \(try deviceID(0)).csbundle: the bundle was not sealed to this store"), "\(notSealed)")
        let bundle0 = fleet.shared.appendingPathComponent("\(try deviceID(0)).csbundle").path
        #expect(notSealed.hasSuffix("; on the machine that wrote it, run `credstore device trust \(key1)` (this store's key), then `credstore sync` there; if that device is retired (an old install), delete \(bundle0)\n"), "\(notSealed)")
        #expect(!notSealed.contains("export"), "\(notSealed)")

        // Machine 1's bundle is sealed to machine 0, but machine 0 does not trust its signer: the
        // fix is here, on machine 0.
        let untrusted = try sync(0).stderr
        #expect(untrusted.hasPrefix("credstore: skipped \(try deviceID(1)).csbundle: the bundle is signed by a device this store does not trust (\(key1))"), "\(untrusted)")
        let bundle = fleet.shared.appendingPathComponent("\(try deviceID(1)).csbundle").path
        #expect(untrusted.hasSuffix("; if that device is yours, run `credstore device trust` with that key here, then `credstore sync` again; if it is retired (an old install), delete \(bundle) and run `credstore device untrust` with that key on every machine that still trusts it\n"), "\(untrusted)")
        #expect(untrusted.components(separatedBy: "device trust").count == 2, "one way to trust it, said once: \(untrusted)")
        #expect(!untrusted.contains("on the machine that wrote it"), "\(untrusted)")

        // Following the notes, each on its machine, the two converge.
        #expect(try fleet.machines[0].run(["device", "trust", key1] + fleet.machines[0].storeArguments).status == 0)
        #expect(try sync(0).stderr.isEmpty)
        #expect(try sync(1).stderr.isEmpty)
        #expect(try fleet.passwords(1, "https://a.example.com", users: ["u0"]) == ["u0": "pw"])
    }

    // MARK: One bad file does not stop syncing

    @Test func syncMergesEveryBundleItCanAndNamesEachFileItRefused() throws {
        let fleet = try Fleet()
        try fleet.trustEachOther()
        try fleet.machines[1].add("https://a.example.com", user: "bob", password: "from-1", ["--persistence", "synchronizable"])
        _ = try fleet.sync(1)
        // The bad files sort before the good one, so an abort at the first would be seen.
        let junk = fleet.shared.appendingPathComponent("0-junk.csbundle")
        try Data("CSBUNDLE not really".utf8).write(to: junk)
        let passphrase = fleet.shared.appendingPathComponent("1-passphrase.csbundle")
        let exported = try fleet.machines[1].run(["export", passphrase.path] + fleet.machines[1].storeArguments,
                                                 environment: ["CREDSTORE_BUNDLE_PASSPHRASE": "hunter2-bundle"])
        #expect(exported.status == 0, "\(exported.stderr)")
        try FileManager.default.createSymbolicLink(atPath: fleet.shared.appendingPathComponent("2-zero.csbundle").path, withDestinationPath: "/dev/zero")
        #expect(mkfifo(fleet.shared.appendingPathComponent("3-fifo.csbundle").path, 0o600) == 0)
        try FileManager.default.createDirectory(at: fleet.shared.appendingPathComponent("4-folder.csbundle"), withIntermediateDirectories: false)

        let result = try fleet.machines[0].run(["sync", fleet.shared.path] + fleet.machines[0].storeArguments)
        #expect(result.status == 65, "\(result.stderr)")
        for name in ["0-junk", "1-passphrase", "2-zero", "3-fifo", "4-folder"] {
            #expect(result.stderr.contains("refused \(name).csbundle:"), "\(name) is named: \(result.stderr)")
        }
        #expect(!result.stderr.contains("hunter2-bundle"))
        // The good bundle was merged all the same, and this store's own bundle written.
        #expect(try fleet.passwords(0, "https://a.example.com", users: ["bob"]) == ["bob": "from-1"])
        let ownName = try #require(try jsonObject(fleet.machines[0].run(["device", "show", "--json"] + fleet.machines[0].storeArguments).stdout)["deviceId"] as? String)
        #expect(FileManager.default.fileExists(atPath: fleet.shared.appendingPathComponent("\(ownName).csbundle").path))
        #expect(result.stderr.contains("\(ownName).csbundle was written"), "\(result.stderr)")
        // Again, with nothing new: the summary says the bundle was left as it was, as stdout does.
        let again = try fleet.machines[0].run(["sync", fleet.shared.path] + fleet.machines[0].storeArguments)
        #expect(again.status == 65 && again.stdout.contains("Left unchanged \(ownName).csbundle"), "\(again.stdout)")
        #expect(again.stderr.contains("\(ownName).csbundle was left as it was") && !again.stderr.contains("was written"), "\(again.stderr)")
    }

    @Test func aBundleOlderThanTheTombstoneWindowIsSkippedWithANote() throws {
        let fleet = try Fleet()
        // A retired device's last bundle, 181 days old, written with the library.
        let retired = try CredentialStorage(
            at: fleet.machines[0].root.appendingPathComponent("retired/credentials.db"),
            key: .keyFile(fleet.machines[0].root.appendingPathComponent("retired/store.key")), rollbackAnchor: .none)
        #expect(try fleet.machines[0].run(["device", "trust", try retired.sync.deviceKey.description] + fleet.machines[0].storeArguments).status == 0)
        let old = nowMillis() - 181 * 24 * 3600 * 1000
        let item = SignedBundleItem(
            space: ProtectionSpace(host: "old.example.com", port: 443, protocol: "https", realm: nil, authenticationMethod: nil),
            user: "ghost", password: "stale", wall: old)
        try retired.writeBundle([item], created: old, for: [try DeviceKey(try fleet.publicKey(0))], to: fleet.shared.appendingPathComponent("retired.csbundle"))

        let result = try fleet.machines[0].run(["sync", fleet.shared.path] + fleet.machines[0].storeArguments)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("skipped retired.csbundle:") && result.stderr.contains("180 days"), "\(result.stderr)")
        #expect(try fleet.passwords(0, "https://old.example.com", users: ["ghost"]).isEmpty)
    }

    @Test func anEditedClockCounterNearInt64MaxIsAnErrorNotACrash() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://a.example.com", user: "alice", password: "first", ["--persistence", "synchronizable"])
        // The clock row edited as someone with write access to the store's folder could: the
        // counter at Int64.max, the wall an hour ahead so the next change must tick the counter.
        try sandbox.sqlite("UPDATE sync_clock SET wall = \(nowMillis() + 3_600_000), counter = \(Int64.max)")
        let result = try sandbox.run(["add", "https://a.example.com", "--user", "bob", "--persistence", "synchronizable"]
            + sandbox.storeArguments, stdin: "second\n")
        // An error of the store (damage, or tampering once the clock is sealed), in one line: no trap.
        #expect([74, 77].contains(result.status) && result.stderrIsOneErrorLine, "status \(result.status): \(result.stderr)")
        #expect(try sandbox.run(["get", "https://a.example.com", "--user", "bob"] + sandbox.storeArguments).status != 0)
    }
}
