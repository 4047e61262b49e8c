import Foundation
import Testing

/// `credstore unlock`, `lock` and `status` with the real kernel keyring: every process of the
/// session opens the passphrase store without its passphrase until the unlock expires or is undone.
@Suite(.serialized) struct UnlockCommandTests {
    static let passphrase = ["CREDSTORE_PASSPHRASE": "correct horse battery"]

    /// A passphrase store with one credential, in a sandbox of its own.
    private func passphraseStore() throws -> Sandbox {
        let sandbox = try Sandbox()
        let created = try sandbox.run(["init", "--passphrase"] + sandbox.storeArguments, environment: Self.passphrase)
        #expect(created.status == 0, "\(created.stderr)")
        let added = try sandbox.run(["add", "https://git.example.com", "--user", "alice"] + sandbox.storeArguments,
                                    stdin: "s3cret\n", environment: Self.passphrase)
        #expect(added.status == 0, "\(added.stderr)")
        return sandbox
    }

    /// Whether the kernel holds a key for a credstore store (what /proc/keys shows this user).
    private func keysInTheKernel() throws -> [String] {
        try String(contentsOfFile: "/proc/keys", encoding: .utf8).split(separator: "\n").filter { $0.contains("credstore:") }.map(String.init)
    }

    @Test func unlockOnceThenOtherProcessesOpenWithoutThePassphraseUntilLock() throws {
        let sandbox = try passphraseStore()
        // Locked: no passphrase in the environment and no terminal, so nothing opens it.
        #expect(try sandbox.run(["get", "https://git.example.com"] + sandbox.storeArguments).status == 77)
        #expect(try sandbox.run(["status"] + sandbox.storeArguments).status == 1)

        let unlocked = try sandbox.run(["unlock", "--timeout", "5m"] + sandbox.storeArguments, environment: Self.passphrase)
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        // Another process, no passphrase anywhere: it opens.
        let got = try sandbox.run(["get", "https://git.example.com"] + sandbox.storeArguments)
        #expect(got.status == 0, "\(got.stderr)")
        #expect(got.stdout == "s3cret\n")
        let status = try sandbox.run(["status", "--json"] + sandbox.storeArguments)
        #expect(status.status == 0)
        #expect(try jsonObject(status.stdout)["unlocked"] as? Bool == true)
        // Possessor-only permissions (3f000000), a timeout, and the key named after the store, not its passphrase.
        let keys = try keysInTheKernel()
        #expect(keys.contains { $0.contains(" 3f000000 ") }, "\(keys)")
        #expect(!keys.contains { $0.contains("correct horse") })

        #expect(try sandbox.run(["lock"] + sandbox.storeArguments).status == 0)
        #expect(try sandbox.run(["get", "https://git.example.com"] + sandbox.storeArguments).status == 77)
        #expect(try sandbox.run(["status"] + sandbox.storeArguments).status == 1)
    }

    @Test func aTimeoutBeyond365DaysIsRefusedBeforeAnythingIsKept() throws {
        let sandbox = try passphraseStore()
        for timeout in ["366d", "8761h", "31536001s", "0s"] {
            let refused = try sandbox.run(["unlock", "--timeout", timeout] + sandbox.storeArguments, environment: Self.passphrase)
            #expect(refused.status == 64 && refused.stderr.contains("--timeout"), "\(timeout): \(refused.stderr)")
        }
        #expect(try sandbox.run(["status"] + sandbox.storeArguments).status == 1, "nothing was kept")
        let longest = try sandbox.run(["unlock", "--timeout", "365d"] + sandbox.storeArguments, environment: Self.passphrase)
        #expect(longest.status == 0, "\(longest.stderr)")
        #expect(try sandbox.run(["lock"] + sandbox.storeArguments).status == 0)
    }

    @Test func theUnlockExpires() throws {
        let sandbox = try passphraseStore()
        #expect(try sandbox.run(["unlock", "--timeout", "1s"] + sandbox.storeArguments, environment: Self.passphrase).status == 0)
        Thread.sleep(forTimeInterval: 2.5)
        let got = try sandbox.run(["get", "https://git.example.com"] + sandbox.storeArguments)
        #expect(got.status == 77, "the unlock should have expired: \(got.stdout)")
        #expect(try sandbox.run(["status"] + sandbox.storeArguments).status == 1)
    }

    @Test func aPasswdInAnotherProcessMakesTheUnlockStaleAndItIsForgotten() throws {
        let sandbox = try passphraseStore()
        #expect(try sandbox.run(["unlock"] + sandbox.storeArguments, environment: Self.passphrase).status == 0)
        // passwd asks for the current passphrase even while unlocked: a wrong one is refused.
        let wrong = try sandbox.run(["passwd"] + sandbox.storeArguments,
                                    environment: ["CREDSTORE_PASSPHRASE": "wrong", "CREDSTORE_NEW_PASSPHRASE": "another one"])
        #expect(wrong.status == 77)
        let changed = try sandbox.run(["passwd"] + sandbox.storeArguments,
                                      environment: Self.passphrase.merging(["CREDSTORE_NEW_PASSPHRASE": "new passphrase"]) { $1 })
        #expect(changed.status == 0, "\(changed.stderr)")
        // The kept key no longer unlocks the store: refused, and forgotten.
        #expect(try sandbox.run(["get", "https://git.example.com"] + sandbox.storeArguments).status == 77)
        #expect(try sandbox.run(["status"] + sandbox.storeArguments).status == 1)
        let withNew = try sandbox.run(["get", "https://git.example.com"] + sandbox.storeArguments, environment: ["CREDSTORE_PASSPHRASE": "new passphrase"])
        #expect(withNew.stdout == "s3cret\n")
    }

    /// The live keys the kernel holds for this sandbox's store (what /proc/keys shows this user,
    /// but those invalidated, revoked or dead and waiting for the collector).
    private func liveKeys(of sandbox: Sandbox) throws -> [String] {
        let id = try sandbox.runProgram(URL(fileURLWithPath: "/usr/bin/sqlite3"), [sandbox.store.path, "SELECT lower(hex(store_id)) FROM store_header"])
        let storeID = id.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(storeID.count == 32, "\(id.stderr)")
        return try keysInTheKernel().filter { line in
            let flags = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? ""
            return line.contains("credstore:\(storeID)") && !flags.contains { "iRD".contains($0) }
        }
    }

    @Test func aFailedUnlockLeavesTheEarlierOneInPlace() throws {
        let sandbox = try passphraseStore()
        #expect(try sandbox.run(["unlock"] + sandbox.storeArguments, environment: Self.passphrase).status == 0)

        // A wrong passphrase: refused, naming where it came from, and the store stays unlocked.
        let wrong = try sandbox.run(["unlock"] + sandbox.storeArguments, environment: ["CREDSTORE_PASSPHRASE": "wrong one"])
        #expect(wrong.status == 77)
        #expect(wrong.stderrIsOneErrorLine, "\(wrong.stderr)")
        #expect(wrong.stderr.contains("CREDSTORE_PASSPHRASE") && !wrong.stderr.contains("--key-file"), "\(wrong.stderr)")
        var got = try sandbox.run(["get", "https://git.example.com"] + sandbox.storeArguments)
        #expect(got.status == 0, "a failed unlock dropped the good one: \(got.stderr)")
        #expect(got.stdout == "s3cret\n")

        // No passphrase at all (no variable, no terminal): the same.
        let none = try sandbox.run(["unlock"] + sandbox.storeArguments)
        #expect(none.status == 77)
        #expect(none.stderrIsOneErrorLine, "\(none.stderr)")
        #expect(none.stderr.contains("CREDSTORE_PASSPHRASE"), "\(none.stderr)")
        #expect(!none.stderr.contains("`credstore unlock` on a terminal"), "unlock itself asks for the passphrase: \(none.stderr)")
        got = try sandbox.run(["get", "https://git.example.com"] + sandbox.storeArguments)
        #expect(got.status == 0, "a failed unlock dropped the good one: \(got.stderr)")
        #expect(try liveKeys(of: sandbox).count == 1)

        // A good one replaces it: still one key. Into the other keyring: still one, the new one.
        #expect(try sandbox.run(["unlock"] + sandbox.storeArguments, environment: Self.passphrase).status == 0)
        #expect(try liveKeys(of: sandbox).count == 1)
        #expect(try sandbox.run(["unlock", "--keyring", "user"] + sandbox.storeArguments, environment: Self.passphrase).status == 0)
        #expect(try liveKeys(of: sandbox).count == 1)
        #expect(try sandbox.run(["lock"] + sandbox.storeArguments).status == 0)
        #expect(try liveKeys(of: sandbox).isEmpty)
        #expect(try sandbox.run(["get", "https://git.example.com"] + sandbox.storeArguments).status == 77)
    }

    @Test func threeWrongPassphrasesAtThePromptSaySoWithoutTheKeyFileAdvice() throws {
        let sandbox = try passphraseStore()
        let terminal = try PseudoTerminal()
        try terminal.start(["unlock"] + sandbox.storeArguments, environment: sandbox.environment)
        for attempt in 1...3 {
            #expect(waitFor("Passphrase for \(sandbox.store.path): ", shown: attempt, on: terminal), "\(terminal.transcript)")
            terminal.type("wrong \(attempt)\r")
        }
        #expect(try terminal.waitForExit() == 77)
        let transcript = terminal.transcript
        #expect(transcript.contains("credstore: three passphrases did not unlock the store \(sandbox.store.path); it stays locked"), "\(transcript)")
        #expect(!transcript.contains("--key-file") && !transcript.contains("CREDSTORE_PASSPHRASE"), "\(transcript)")
        #expect(!transcript.contains("wrong 1") && !transcript.contains("wrong 3"), "the prompt does not echo")
    }

    /// Waits until `text` has been shown `count` times, and the output has paused (a prompt waits).
    private func waitFor(_ text: String, shown count: Int, on terminal: PseudoTerminal) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        let never = UUID().uuidString
        while terminal.transcript.components(separatedBy: text).count - 1 < count {
            guard Date() < deadline else { return false }
            // Reads what the terminal shows for a moment: nothing shows a fresh UUID.
            terminal.waitFor(never, timeout: 0.2)
        }
        return true
    }

    @Test func anUnlockIntoAKeyringOutOfThisSessionsReachLeavesNoKey() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/keyctl"), "keyutils is not installed: run .ci/setup")
        let sandbox = try passphraseStore()
        // `keyctl session -` runs it with a new anonymous session keyring, which does not link the
        // user keyring: this process does not possess a key kept there.
        let outside = try sandbox.runProgram(URL(fileURLWithPath: "/usr/bin/keyctl"),
                                             ["session", "-", Sandbox.binary.path, "unlock", "--keyring", "user"] + sandbox.storeArguments,
                                             environment: Self.passphrase)
        let error = outside.stderr.split(separator: "\n").filter { $0.hasPrefix("credstore: ") }
        #expect(outside.status == 69, "\(outside.stderr)")
        #expect(error.count == 1 && error[0].contains("`credstore unlock --keyring session`"), "\(outside.stderr)")
        #expect(try liveKeys(of: sandbox).isEmpty, "a key out of reach was left behind")
        // The session keyring of that session serves it.
        let inside = try sandbox.runProgram(URL(fileURLWithPath: "/usr/bin/keyctl"),
                                            ["session", "-", "/bin/sh", "-c", "\"$0\" unlock \"$@\" && \"$0\" get https://git.example.com \"$@\" && \"$0\" lock \"$@\"",
                                             Sandbox.binary.path] + sandbox.storeArguments,
                                            environment: Self.passphrase)
        #expect(inside.status == 0, "\(inside.stderr)")
        #expect(inside.stdout == "s3cret\n")
        #expect(try sandbox.run(["lock"] + sandbox.storeArguments).status == 0)
        #expect(try liveKeys(of: sandbox).isEmpty)
    }

    @Test func twoUnlocksAtOnceEndWithOneValidKey() throws {
        let sandbox = try passphraseStore()
        let environment = sandbox.environment.merging(Self.passphrase) { $1 }
        let processes = try (0..<2).map { _ in
            let process = Process()
            process.executableURL = Sandbox.binary
            process.arguments = ["unlock"] + sandbox.storeArguments
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        for process in processes { process.waitUntilExit() }
        #expect(processes.allSatisfy { $0.terminationStatus == 0 })
        #expect(try liveKeys(of: sandbox).count == 1)
        let got = try sandbox.run(["get", "https://git.example.com"] + sandbox.storeArguments)
        #expect(got.stdout == "s3cret\n", "\(got.stderr)")
        #expect(try sandbox.run(["lock"] + sandbox.storeArguments).status == 0)
        #expect(try liveKeys(of: sandbox).isEmpty)
    }

    @Test func aKeyFileStoreNeedsNoUnlock() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://a.example.com", user: "u", password: "p")
        #expect(try sandbox.run(["unlock"] + sandbox.storeArguments, environment: Self.passphrase).status == 64)
        #expect(try sandbox.run(["status"] + sandbox.storeArguments).stdout.contains("key file"))
    }
}
