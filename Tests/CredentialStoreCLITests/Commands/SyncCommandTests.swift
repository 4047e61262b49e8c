import Foundation
import Testing

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
        #expect(try jsonObject(imported.stdout).mapValues { $0 as? Int } == ["added": 1, "updated": 0, "removed": 0, "unchanged": 0])
        #expect(try desktop.run(["get", "https://git.example.com"] + desktop.storeArguments).stdout == "token-1\n")

        let wrong = try desktop.run(["import", bundle] + desktop.storeArguments, environment: ["CREDSTORE_BUNDLE_PASSPHRASE": "wrong"])
        #expect(wrong.status == 77 && wrong.stderrIsOneErrorLine && !wrong.stderr.contains("wrong\n"))
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
}
