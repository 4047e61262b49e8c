import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `credstore backup` and `credstore restore`: a whole store, every tier on disk with its details,
/// out to one encrypted file while the store is in use, and back on purpose.
struct BackupCommandTests {
    let passphrase = ["CREDSTORE_BACKUP_PASSPHRASE": "backup passphrase"]

    /// alice (permanent, with label, attributes and expiry) and bob in one space, bob its
    /// default; carol synchronizable; a TLS pin.
    func filledSandbox() throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-alice",
                        ["--label", "work", "--attr", "team=ops", "--comment", "the API key", "--expires", "2099-01-01T00:00:00Z"])
        try sandbox.add("https://api.example.com", user: "bob", password: "pw-bob")
        #expect(try sandbox.run(["default", "https://api.example.com", "--user", "bob"] + sandbox.storeArguments).status == 0)
        try sandbox.add("https://synced.example.com", user: "carol", password: "pw-carol", ["--persistence", "synchronizable"])
        let pin = "sha256//" + Data(repeating: 7, count: 32).base64EncodedString()
        #expect(try sandbox.run(["pin", "add", "pinned.example.com", pin] + sandbox.storeArguments).status == 0)
        return sandbox
    }

    func backUp(_ sandbox: Sandbox) throws -> URL {
        let file = sandbox.root.appendingPathComponent("store.backup")
        let result = try sandbox.run(["backup", file.path] + sandbox.storeArguments, environment: passphrase)
        #expect(result.status == 0, "backup failed: \(result.stderr)")
        #expect(sandbox.mode(of: file) == 0o600)
        return file
    }

    func get(_ sandbox: Sandbox, _ url: String, _ more: [String] = []) throws -> RunResult {
        try sandbox.run(["get", url] + more + sandbox.storeArguments)
    }

    @Test func aBackupRestoredInAFreshHomeGivesEveryCredentialBackWithItsDetails() throws {
        let sandbox = try filledSandbox()
        let file = try backUp(sandbox)
        let listing = try sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout
        let pins = try sandbox.run(["pin", "list", "--json"] + sandbox.storeArguments).stdout

        // Another home: no store, no key file, no anchors. The restore makes them.
        let fresh = try Sandbox()
        let restored = try fresh.run(["restore", file.path] + fresh.storeArguments, environment: passphrase)
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(restored.stdout.contains("credentials, in a new store"), "\(restored.stdout)")
        #expect(FileManager.default.fileExists(atPath: fresh.store.deletingLastPathComponent().appendingPathComponent("store.key").path))

        #expect(try fresh.run(["list", "--json"] + fresh.storeArguments).stdout == listing)
        #expect(try fresh.run(["pin", "list", "--json"] + fresh.storeArguments).stdout == pins)
        #expect(try get(fresh, "https://api.example.com").stdout == "pw-bob\n")
        #expect(try get(fresh, "https://api.example.com", ["--user", "alice"]).stdout == "pw-alice\n")
        #expect(try get(fresh, "https://synced.example.com").stdout == "pw-carol\n")
        let entries = try jsonArray(try fresh.run(["list", "--json"] + fresh.storeArguments).stdout)
        let alice = try #require(entries.first { $0["user"] as? String == "alice" })
        #expect(alice["label"] as? String == "work")
        #expect(alice["expires"] as? String == "2099-01-01T00:00:00Z")
        #expect(alice["comment"] as? String == "the API key")
        #expect((alice["attributes"] as? [String: String]) == ["team": "ops"])
        let verified = try fresh.run(["verify"] + fresh.storeArguments)
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
    }

    @Test func aRestoreOverAStoreThatChangedSinceSaysWhatIsOlderAndNeedsYesWithoutATerminal() throws {
        let sandbox = try filledSandbox()
        let file = try backUp(sandbox)
        let deviceBefore = try sandbox.run(["device", "show"] + sandbox.storeArguments).stdout
        // Since the backup: alice changed, erin added, carol removed.
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-alice-2")
        try sandbox.add("https://api.example.com", user: "erin", password: "pw-erin")
        #expect(try sandbox.run(["remove", "https://synced.example.com", "--user", "carol", "--synchronizable"] + sandbox.storeArguments).status == 0)

        let refused = try sandbox.run(["restore", file.path] + sandbox.storeArguments, environment: passphrase)
        #expect(refused.status == 64)
        #expect(refused.stderrIsOneErrorLine, "\(refused.stderr)")
        #expect(refused.stderr.contains("--yes"))
        for change in ["1 credential changed since the backup goes back to its older value", "1 added since is removed", "1 removed since comes back"] {
            #expect(refused.stderr.contains(change), "\(refused.stderr)")
        }
        #expect(try get(sandbox, "https://api.example.com", ["--user", "alice"]).stdout == "pw-alice-2\n", "a refused restore changed the store")

        let restored = try sandbox.run(["restore", file.path, "--yes"] + sandbox.storeArguments, environment: passphrase)
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(restored.stdout.contains("1 credential changed since the backup went back to its older value"), "\(restored.stdout)")
        // No rollback error: the older state is this path's store now.
        let alice = try get(sandbox, "https://api.example.com", ["--user", "alice"])
        #expect(alice.status == 0, "\(alice.stderr)")
        #expect(alice.stdout == "pw-alice\n")
        #expect(try get(sandbox, "https://api.example.com", ["--user", "erin"]).status == 1)
        #expect(try get(sandbox, "https://synced.example.com").stdout == "pw-carol\n")
        #expect(try sandbox.run(["verify"] + sandbox.storeArguments).status == 0)
        // The same machine keeps its device identity.
        #expect(try sandbox.run(["device", "show"] + sandbox.storeArguments).stdout == deviceBefore)
        // And the store goes on from there.
        try sandbox.add("https://api.example.com", user: "frank", password: "pw-frank")
        #expect(try get(sandbox, "https://api.example.com", ["--user", "frank"]).stdout == "pw-frank\n")
    }

    @Test func aRestoreOnATerminalAsksFirstAndANoChangesNothing() throws {
        let sandbox = try filledSandbox()
        let file = try backUp(sandbox)
        try sandbox.add("https://api.example.com", user: "erin", password: "pw-erin")
        let environment = sandbox.environment.merging(passphrase) { _, new in new }
        for (answer, status) in [("n", Int32(1)), ("y", 0)] {
            let terminal = try PseudoTerminal()
            try terminal.start(["restore", file.path] + sandbox.storeArguments, environment: environment)
            #expect(terminal.waitFor("Restore it? [y/N]"), "\(terminal.transcript)")
            #expect(terminal.transcript.contains("1 added since is removed"))
            terminal.type(answer + "\n")
            #expect(try terminal.waitForExit() == status, "\(terminal.transcript)")
            let erin = try get(sandbox, "https://api.example.com", ["--user", "erin"])
            #expect(erin.status == (answer == "n" ? 0 : 1), "after answering \(answer)")
        }
    }

    @Test func aWrongBackupPassphraseExits77AndChangesNothing() throws {
        let sandbox = try filledSandbox()
        let file = try backUp(sandbox)
        try sandbox.add("https://api.example.com", user: "erin", password: "pw-erin")
        let before = try storeFiles(sandbox)
        let result = try sandbox.run(["restore", file.path, "--yes"] + sandbox.storeArguments,
                                     environment: ["CREDSTORE_BACKUP_PASSPHRASE": "not the passphrase"])
        #expect(result.status == 77)
        #expect(result.stderrIsOneErrorLine, "\(result.stderr)")
        #expect(result.stderr.contains("CREDSTORE_BACKUP_PASSPHRASE"))
        #expect(!result.stderr.contains("not the passphrase") && !result.stderr.contains("backup passphrase"))
        #expect(try storeFiles(sandbox) == before)
        #expect(try get(sandbox, "https://api.example.com", ["--user", "erin"]).stdout == "pw-erin\n")
        // Without the variable and without a terminal, it is a key that is missing: 77 too.
        let missing = try sandbox.run(["restore", file.path, "--yes"] + sandbox.storeArguments)
        #expect(missing.status == 77)
        #expect(missing.stderr.contains("CREDSTORE_BACKUP_PASSPHRASE"))
    }

    @Test(arguments: [
        "DELETE FROM credentials WHERE user_index = (SELECT min(user_index) FROM credentials)",
        "UPDATE credentials SET sealed_credential = zeroblob(length(sealed_credential))",
        "UPDATE store_seal SET generation = generation + 1",
    ])
    func aTamperedBackupIsRefusedAndChangesNothing(edit: String) throws {
        let sandbox = try filledSandbox()
        let file = try backUp(sandbox)
        try sandbox.sqlite(edit, database: file)
        try sandbox.add("https://api.example.com", user: "erin", password: "pw-erin")
        let before = try storeFiles(sandbox)
        let result = try sandbox.run(["restore", file.path, "--yes"] + sandbox.storeArguments, environment: passphrase)
        #expect(result.status == 77, "\(result.stderr)")
        #expect(result.stderrIsOneErrorLine, "\(result.stderr)")
        #expect(result.stderr.contains("nothing was restored"))
        #expect(!result.stderr.contains("credstore verify"), "verify checks the store, not the backup: \(result.stderr)")
        #expect(try storeFiles(sandbox) == before)
        #expect(try get(sandbox, "https://api.example.com", ["--user", "erin"]).stdout == "pw-erin\n")
    }

    @Test func aBackupIsNotWrittenOverTheStoreOrItsKeyFile() throws {
        let sandbox = try filledSandbox()
        let folder = sandbox.store.deletingLastPathComponent()
        let keyFile = folder.appendingPathComponent("store.key")
        let key = try Data(contentsOf: keyFile)
        // The store's files whether they exist now or not, by another spelling, and the state
        // folder that holds its rollback anchor.
        let anchors = sandbox.root.appendingPathComponent("home/.local/state/credstore/anchors")
        let targets = [
            sandbox.store.path, keyFile.path, sandbox.store.path + "-journal", sandbox.store.path + "-wal",
            folder.path + "/../store/credentials.db-shm", anchors.appendingPathComponent("a.backup").path,
        ]
        for target in targets {
            let result = try sandbox.run(["backup", target] + sandbox.storeArguments, environment: passphrase)
            #expect(result.status == 65, "\(target): \(result.stderr)")
            #expect(result.stderrIsOneErrorLine)
        }
        #expect(!FileManager.default.fileExists(atPath: anchors.appendingPathComponent("a.backup").path))
        #expect(try Data(contentsOf: keyFile) == key)
        #expect(try get(sandbox, "https://api.example.com").stdout == "pw-bob\n")
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".") }
        #expect(left.isEmpty, "temporary files left: \(left)")
    }

    @Test func aRestoreReadsNoFIFOAndNeverReplacesTheBackupItReads() throws {
        let sandbox = try filledSandbox()
        let folder = sandbox.store.deletingLastPathComponent()
        // A FIFO with no writer: refused at once, not waited on, and nothing left behind.
        let fifo = sandbox.root.appendingPathComponent("pipe.backup")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let fromFIFO = try sandbox.run(["restore", fifo.path, "--yes"] + sandbox.storeArguments, environment: passphrase)
        #expect(fromFIFO.status == 65 && fromFIFO.stderr.contains("not a regular file"), "\(fromFIFO.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".") }.isEmpty)

        // The backup as the store to restore into: refused, the backup left as it was.
        let file = try backUp(sandbox)
        let bytes = try Data(contentsOf: file)
        let onto = try sandbox.run(["restore", file.path, "--yes", "--store", file.path], environment: passphrase)
        #expect(onto.status == 65 && onto.stderrIsOneErrorLine, "\(onto.stderr)")
        #expect(try Data(contentsOf: file) == bytes)
        #expect(try get(sandbox, "https://api.example.com").stdout == "pw-bob\n")
    }

    @Test func aRestoredMachinesNextSyncKeepsTheChangesItsOwnBundleCarried() throws {
        let fleet = try SyncCommandTests.Fleet()
        try fleet.trustEachOther()
        let laptop = fleet.machines[0]
        let url = "https://vault.example.com"
        try laptop.add(url, user: "alice", password: "v1", ["--persistence", "synchronizable"])
        _ = try fleet.sync(0)
        let file = laptop.root.appendingPathComponent("before.backup")
        #expect(try laptop.run(["backup", file.path] + laptop.storeArguments, environment: passphrase).status == 0)
        // A change that reaches the folder, and no other machine yet; then the backup goes back.
        try laptop.add(url, user: "alice", password: "v2", ["--persistence", "synchronizable"])
        _ = try fleet.sync(0)
        #expect(try laptop.run(["restore", file.path, "--yes"] + laptop.storeArguments, environment: passphrase).status == 0)
        #expect(try fleet.passwords(0, url, users: ["alice"]) == ["alice": "v1"])

        let synced = try laptop.run(["sync", fleet.shared.path] + laptop.storeArguments)
        #expect(synced.status == 0 && synced.stderr.contains("merged back first"), "\(synced.stderr)")
        #expect(try fleet.passwords(0, url, users: ["alice"]) == ["alice": "v2"], "the change the bundle carried is back")
        _ = try fleet.sync(1)
        #expect(try fleet.passwords(1, url, users: ["alice"]) == ["alice": "v2"], "and it still reaches the other machines")
        // The next sync has nothing to merge back.
        #expect(!(try laptop.run(["sync", fleet.shared.path] + laptop.storeArguments).stderr.contains("merged back")))
    }

    /// The proof that a backup is consistent while the store is written: a writer process adds
    /// credentials in a loop; the backup is taken in the middle; every add acknowledged (exit 0)
    /// before the backup started is in it, and the restored store verifies clean.
    @Test func aBackupTakenWhileAnotherProcessWritesHoldsEveryAcknowledgedWrite() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://first.example.com", user: "u", password: "pw-first")
        let acknowledged = sandbox.root.appendingPathComponent("acknowledged")
        let stop = sandbox.root.appendingPathComponent("stop")
        let script = """
            i=0
            while [ ! -e '\(stop.path)' ] && [ $i -lt 2000 ]; do
              i=$((i + 1))
              if printf 'pw-%d\\n' $i | '\(Sandbox.binary.path)' add "https://w$i.example.com" --user u --store '\(sandbox.store.path)'; then
                echo $i >> '\(acknowledged.path)'
              fi
            done
            """
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/bin/sh")
        writer.arguments = ["-c", script]
        writer.environment = sandbox.environment
        try writer.run()
        defer {
            _ = FileManager.default.createFile(atPath: stop.path, contents: nil)
            writer.waitUntilExit()
        }
        func acknowledgedSoFar() -> Set<Int> {
            let text = (try? String(contentsOf: acknowledged, encoding: .utf8)) ?? ""
            // Whole lines only: the writer may be halfway through one.
            return Set(text.split(separator: "\n", omittingEmptySubsequences: true).dropLast(text.hasSuffix("\n") ? 0 : 1).compactMap { Int($0) })
        }
        let deadline = Date().addingTimeInterval(60)
        while acknowledgedSoFar().count < 5, Date() < deadline { usleep(20_000) }
        let before = acknowledgedSoFar()
        #expect(before.count >= 5, "the writer did not get going")

        let file = sandbox.root.appendingPathComponent("store.backup")
        let backup = try sandbox.run(["backup", file.path] + sandbox.storeArguments, environment: passphrase)
        #expect(backup.status == 0, "\(backup.stderr)")
        let after = acknowledgedSoFar()
        _ = FileManager.default.createFile(atPath: stop.path, contents: nil)
        writer.waitUntilExit()
        #expect(after.count > before.count, "the writer did not write while the backup was taken")

        let fresh = try Sandbox()
        #expect(try fresh.run(["restore", file.path] + fresh.storeArguments, environment: passphrase).status == 0)
        let hosts = Set(try jsonArray(try fresh.run(["list", "--json"] + fresh.storeArguments).stdout).compactMap { $0["host"] as? String })
        let missing = before.filter { !hosts.contains("w\($0).example.com") }
        #expect(missing.isEmpty, "acknowledged before the backup started, but not in it: \(missing.sorted())")
        #expect(hosts.contains("first.example.com"))
        let verified = try fresh.run(["verify"] + fresh.storeArguments)
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        for number in before.sorted().prefix(3) {
            #expect(try get(fresh, "https://w\(number).example.com").stdout == "pw-\(number)\n")
        }
    }

    /// The store's folder, file by file.
    func storeFiles(_ sandbox: Sandbox) throws -> [String: Data] {
        let folder = sandbox.store.deletingLastPathComponent()
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            files[name] = try Data(contentsOf: folder.appendingPathComponent(name))
        }
        return files
    }
}
