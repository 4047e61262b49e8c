import ArgumentParser
import CredentialStore
import CredentialStoreCLI
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The failures of the table of docs/contract.md ("The command line"): one line on stderr that says what to do, the sysexits status,
/// no stack trace, no secret.
struct ExitCodesTests {
    @Test func aWrongPassphraseExits77() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.run(["init", "--passphrase"] + sandbox.storeArguments, environment: ["CREDSTORE_PASSPHRASE": "right one"]).status == 0)
        let result = try sandbox.run(["list"] + sandbox.storeArguments, environment: ["CREDSTORE_PASSPHRASE": "wrong one"])
        #expect(result.status == 77)
        #expect(result.stdout.isEmpty)
        #expect(result.stderrIsOneErrorLine)
        #expect(result.stderr.contains("passphrase"))
        #expect(result.stderr.contains("CREDSTORE_PASSPHRASE"), "the CLI names where the passphrase comes from: \(result.stderr)")
        #expect(!result.stderr.contains("wrong one") && !result.stderr.contains("right one"))
    }

    @Test func theWrongKeyFileExits77() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw")
        let otherKey = sandbox.root.appendingPathComponent("other/store.key")
        #expect(try sandbox.run(["init", "--store", sandbox.root.appendingPathComponent("other/credentials.db").path]).status == 0)
        let result = try sandbox.run(["get", "https://api.example.com", "--key-file", otherKey.path] + sandbox.storeArguments)
        #expect(result.status == 77)
        #expect(result.stderrIsOneErrorLine)
    }

    @Test func aMissingKeyFileExits77() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw")
        try FileManager.default.removeItem(at: sandbox.store.deletingLastPathComponent().appendingPathComponent("store.key"))
        let result = try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments)
        #expect(result.status == 77)
        #expect(result.stderrIsOneErrorLine)
        #expect(result.stderr.contains("store.key"))
    }

    @Test func aCorruptedStoreExits74() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw")
        let handle = try FileHandle(forWritingTo: sandbox.store)
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 100))
        try handle.close()

        for command in [["get", "https://api.example.com"], ["list"], ["verify"], ["add", "https://b.example.com", "--user", "bob"]] {
            let result = try sandbox.run(command + sandbox.storeArguments, stdin: "pw\n")
            #expect(result.status == 74, "\(command)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderrIsOneErrorLine, "\(result.stderr)")
        }
    }

    @Test func aTamperedSecretExits77OnGet() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw")
        try sandbox.sqlite("UPDATE credentials SET sealed_credential = zeroblob(length(sealed_credential))")
        let result = try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments)
        #expect(result.status == 77)
        #expect(result.stdout.isEmpty)
        #expect(result.stderrIsOneErrorLine)
        #expect(result.stderr.contains("credstore verify"), "the CLI's advice for tampering: \(result.stderr)")
    }

    @Test func aStoreReadableByOthersExits77() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw")
        chmod(sandbox.store.path, 0o644)
        let result = try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments)
        #expect(result.status == 77)
        #expect(result.stdout.isEmpty)
        #expect(result.stderrIsOneErrorLine)
        #expect(result.stderr.contains("chmod 600"))

        chmod(sandbox.store.path, 0o600)
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).stdout == "pw\n")
    }

    @Test func aStoreThatIsASymbolicLinkExits77() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw")
        let link = sandbox.root.appendingPathComponent("store/link.db")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: sandbox.store)
        let result = try sandbox.run(["get", "https://api.example.com", "--store", link.path,
                                      "--key-file", sandbox.store.deletingLastPathComponent().appendingPathComponent("store.key").path])
        #expect(result.status == 77)
        #expect(result.stderrIsOneErrorLine)
    }

    @Test func usageErrorsExit64InOneLine() throws {
        let sandbox = try Sandbox()
        for arguments in [["frobnicate"], ["get"], ["get", "https://a.example.com", "--bogus"], ["list", "extra"], ["get", "https://a.example.com", "--method", "telepathy"]] {
            let result = try sandbox.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderrIsOneErrorLine, "\(result.stderr)")
        }
    }

    @Test func helpAndVersionGoToStdoutWithStatus0() throws {
        let sandbox = try Sandbox()
        for arguments in [["--help"], ["help", "get"], ["get", "--help"], ["--version"]] {
            let result = try sandbox.run(arguments)
            #expect(result.status == 0, "\(arguments)")
            #expect(!result.stdout.isEmpty)
            #expect(result.stderr.isEmpty)
        }
    }

    /// A missing bundle passphrase exited 65 on import, 64 on export and 77 for a
    /// store. One rule now (docs/cli.md, "Exit statuses"): a passphrase that unlocks something that
    /// exists (a store, a bundle to import) is a key, and missing or wrong it is 77; a new one (for
    /// `init --passphrase`, `passwd`, `export`) in neither its variable nor a terminal is 64.
    @Test func aMissingOrWrongPassphraseFollowsOneRule() throws {
        let sandbox = try Sandbox()
        let vault = sandbox.root.appendingPathComponent("vault/credentials.db").path
        #expect(try sandbox.run(["init", "--passphrase", "--store", vault], environment: ["CREDSTORE_PASSPHRASE": "vault-pass"]).status == 0)
        try sandbox.add("https://a.example.com", user: "alice", password: "pw", ["--persistence", "synchronizable"])
        let bundle = sandbox.root.appendingPathComponent("b.csbundle").path
        #expect(try sandbox.run(["export", bundle] + sandbox.storeArguments, environment: ["CREDSTORE_BUNDLE_PASSPHRASE": "bundle-pass"]).status == 0)

        let unlock: [(name: String, arguments: [String], environment: [String: String], variable: String?)] = [
            ("a store's, missing", ["list", "--store", vault], [:], "CREDSTORE_PASSPHRASE"),
            ("a store's, wrong", ["list", "--store", vault], ["CREDSTORE_PASSPHRASE": "not-it"], nil),
            ("a bundle's on import, missing", ["import", bundle] + sandbox.storeArguments, [:], "CREDSTORE_BUNDLE_PASSPHRASE"),
            ("a bundle's on import, wrong", ["import", bundle] + sandbox.storeArguments, ["CREDSTORE_BUNDLE_PASSPHRASE": "not-it"], nil),
        ]
        let new: [(name: String, arguments: [String], environment: [String: String], variable: String?)] = [
            ("a new bundle's on export", ["export", bundle + ".2"] + sandbox.storeArguments, [:], "CREDSTORE_BUNDLE_PASSPHRASE"),
            ("a new store's on init", ["init", "--passphrase", "--store", vault + ".2"], [:], "CREDSTORE_PASSPHRASE"),
            ("the new one of passwd", ["passwd", "--store", vault], ["CREDSTORE_PASSPHRASE": "vault-pass"], "CREDSTORE_NEW_PASSPHRASE"),
        ]
        for (cases, status) in [(unlock, Int32(77)), (new, 64)] {
            for (name, arguments, environment, variable) in cases {
                let result = try sandbox.run(arguments, environment: environment)
                #expect(result.status == status, "\(name): \(result.status) \(result.stderr)")
                #expect(result.stderrIsOneErrorLine, "\(name): \(result.stderr)")
                if let variable { #expect(result.stderr.contains(variable), "\(name) names what to set: \(result.stderr)") }
                #expect(!result.stderr.contains("-pass") && !result.stderr.contains("not-it"), "\(name): no secret in \(result.stderr)")
            }
        }
        #expect(try sandbox.run(["get", "https://a.example.com"] + sandbox.storeArguments).stdout == "pw\n", "nothing was imported over it")
    }

    @Test func everyLibraryCodeMapsToASysexitsStatus() {
        let expected: [(CredentialStorageError.Code, Int32)] = [
            (.notFound, 1), (.synchronizableRemovalNeedsOption, 64), (.invalidProtectionSpace, 65), (.invalidInput, 65),
            (.invalidBundle, 65), (.ambiguousMatch, 65), (.io, 74), (.corrupt, 74), (.unsupportedFormatVersion, 74),
            (.wrongKey, 77), (.tamperDetected, 77), (.permissionsTooOpen, 77), (.bundleNotForThisStore, 77),
        ]
        for (code, status) in expected {
            #expect(code.exitCode.rawValue == status, "\(code)")
        }
    }

    /// The library's message says what happened; the CLI adds, by code, the command, flag or
    /// variable that fixes it, in the same one line.
    @Test func theCLIAddsItsAdviceByCodeToTheLibrarysMessage() {
        let expected: [(CredentialStorageError.Code, command: String, advice: String?)] = [
            (.wrongKey, "list", "CREDSTORE_PASSPHRASE"), (.wrongKey, "import", "CREDSTORE_BUNDLE_PASSPHRASE"),
            (.wrongKey, "restore", "CREDSTORE_BACKUP_PASSPHRASE"),
            // Which command fixes a store that fails its checks depends on what happened (an
            // older copy put back, another store put in place: `init --force`); StoreAdviceCommandTests
            // runs each in its situation.
            (.tamperDetected, "get", "credstore verify"), (.tamperDetected, "get", "credstore restore FILE"),
            (.corrupt, "list", "credstore restore FILE"), (.synchronizableRemovalNeedsOption, "remove", "--synchronizable"),
            (.bundleNotForThisStore, "import", "credstore device trust"), (.invalidInput, "device", "credstore device show"),
            (.unsupportedFormatVersion, "get", "upgrade credstore"),
            (.notFound, "get", nil), (.ambiguousMatch, "get", nil), (.io, "add", nil),
        ]
        for (code, command, advice) in expected {
            let errors = CapturedText()
            let console = Console(environment: [:], output: CapturedText(), errors: errors, secrets: ScriptedInput(terminal: false, lines: []))
            let status = CredstoreCommand.report(CredentialStorageError(code, "what happened"), arguments: [command, "x"], to: console)
            #expect(status == code.exitCode.rawValue)
            #expect(errors.value.hasPrefix("credstore: what happened"), "the library's fact comes first: \(errors.value)")
            #expect(errors.value.filter { $0 == "\n" }.count == 1, "one line: \(errors.value)")
            if let advice {
                #expect(errors.value.contains(advice), "\(code) on \(command): \(errors.value)")
            } else {
                #expect(errors.value == "credstore: what happened\n", "no advice for \(code): \(errors.value)")
            }
        }
    }

    @Test func anUnexpectedErrorIsOneLineWithStatus74() async {
        struct Surprise: Error {}
        let errors = CapturedText()
        let console = Console(environment: [:], output: CapturedText(), errors: errors, secrets: ScriptedInput(terminal: false, lines: []))
        let status = CredstoreCommand.report(Surprise(), arguments: [], to: console)
        #expect(status == 74)
        #expect(errors.value.hasPrefix("credstore: unexpected error: "))
        #expect(errors.value.filter { $0 == "\n" }.count == 1)
    }
}
