import Foundation
import Testing

/// `credstore init`.
struct InitCommandTests {
    @Test func initCreatesAKeyFileStoreInPrivateFiles() throws {
        let sandbox = try Sandbox()
        let created = try sandbox.run(["init"] + sandbox.storeArguments)
        #expect(created.status == 0)
        #expect(created.stderr.isEmpty)
        #expect(created.stdout.contains(sandbox.store.path))
        let keyFile = sandbox.store.deletingLastPathComponent().appendingPathComponent("store.key")
        #expect(sandbox.mode(of: sandbox.store) == 0o600)
        #expect(sandbox.mode(of: keyFile) == 0o600)
        #expect(sandbox.mode(of: sandbox.store.deletingLastPathComponent()) == 0o700)

        let again = try sandbox.run(["init", "--json"] + sandbox.storeArguments)
        #expect(again.status == 0)
        let report = try jsonObject(again.stdout)
        #expect(report["created"] as? Bool == false)
        #expect(report["protection"] as? String == "keyFile")
        #expect(report["keyFile"] as? String == keyFile.path)
        #expect(report["store"] as? String == sandbox.store.path)
    }

    @Test func initUsesTheDefaultPathsWithoutOptions() throws {
        let sandbox = try Sandbox()
        let created = try sandbox.run(["init", "--json"])
        #expect(created.status == 0)
        let report = try jsonObject(created.stdout)
        #expect(report["store"] as? String == sandbox.defaultStore.path)
        #expect(report["created"] as? Bool == true)

        // Without XDG_DATA_HOME, ~/.local/share.
        var environment = sandbox.environment
        environment.removeValue(forKey: "XDG_DATA_HOME")
        sandbox.environment = environment
        let home = try jsonObject(sandbox.run(["init", "--json"]).stdout)
        #expect(home["store"] as? String == sandbox.root.appendingPathComponent("home/.local/share/credstore/credentials.db").path)
    }

    @Test func aPassphraseInTheEnvironmentDoesNotMakeAPassphraseStoreWithoutTheFlag() throws {
        let sandbox = try Sandbox()
        let created = try sandbox.run(["init", "--json"] + sandbox.storeArguments, environment: ["CREDSTORE_PASSPHRASE": "ignored"])
        #expect(try jsonObject(created.stdout)["protection"] as? String == "keyFile")
    }

    @Test func initPassphraseMakesAStoreThatNeedsThePassphrase() throws {
        let sandbox = try Sandbox()
        let passphrase = ["CREDSTORE_PASSPHRASE": "correct horse"]
        let created = try sandbox.run(["init", "--passphrase", "--json"] + sandbox.storeArguments, environment: passphrase)
        #expect(created.status == 0)
        let report = try jsonObject(created.stdout)
        #expect(report["protection"] as? String == "passphrase")
        #expect(report["keyFile"] is NSNull)
        #expect(!FileManager.default.fileExists(atPath: sandbox.store.deletingLastPathComponent().appendingPathComponent("store.key").path))

        #expect(try sandbox.run(["add", "https://api.example.com", "--user", "alice"] + sandbox.storeArguments, stdin: "pw\n", environment: passphrase).status == 0)
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments, environment: passphrase).stdout == "pw\n")

        // No passphrase and no terminal: refused, with what to do.
        let locked = try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments)
        #expect(locked.status == 77)
        #expect(locked.stderrIsOneErrorLine)
        #expect(locked.stderr.contains("CREDSTORE_PASSPHRASE"))

        // init without --passphrase on it is a mismatch, with --passphrase a no-op.
        #expect(try sandbox.run(["init"] + sandbox.storeArguments).status == 64)
        #expect(try sandbox.run(["init", "--passphrase"] + sandbox.storeArguments).status == 0)
    }

    /// The environment is read as the C library reads it, by the first `=`: a passphrase that
    /// starts with a combining mark (one Character with the `=` before it) is the passphrase.
    @Test func aPassphraseThatStartsWithACombiningMarkIsReadFromTheEnvironmentWhole() throws {
        let sandbox = try Sandbox()
        let passphrase = ["CREDSTORE_PASSPHRASE": "\u{301}correct=horse"]
        #expect(try sandbox.run(["init", "--passphrase"] + sandbox.storeArguments, environment: passphrase).status == 0)
        #expect(try sandbox.run(["add", "https://api.example.com", "--user", "alice"] + sandbox.storeArguments, stdin: "pw\n", environment: passphrase).status == 0)
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments, environment: passphrase).stdout == "pw\n")
        let other = try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments, environment: ["CREDSTORE_PASSPHRASE": "horse"])
        #expect(other.status == 77 && other.stdout.isEmpty)
    }

    @Test func initPassphraseWithoutAPassphraseOrTerminalExits64() throws {
        let sandbox = try Sandbox()
        let result = try sandbox.run(["init", "--passphrase"] + sandbox.storeArguments)
        #expect(result.status == 64)
        #expect(result.stderrIsOneErrorLine)
        #expect(!FileManager.default.fileExists(atPath: sandbox.store.path))
        #expect(try sandbox.run(["init", "--passphrase", "--key-file", "/tmp/k"] + sandbox.storeArguments).status == 64)
    }
}
