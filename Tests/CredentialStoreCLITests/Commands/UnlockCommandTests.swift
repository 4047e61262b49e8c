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

    @Test func aKeyFileStoreNeedsNoUnlock() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://a.example.com", user: "u", password: "p")
        #expect(try sandbox.run(["unlock"] + sandbox.storeArguments, environment: Self.passphrase).status == 64)
        #expect(try sandbox.run(["status"] + sandbox.storeArguments).stdout.contains("key file"))
    }
}
