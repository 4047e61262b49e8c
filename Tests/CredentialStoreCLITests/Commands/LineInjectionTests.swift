import CredentialStore
import CredentialStoreCLI
import Foundation
import Testing
import CredentialStoreFormats

/// Line injection as a user meets it: a crafted netrc file, a crafted name or a store written
/// before the rules, and what git, scripts and terminals then get from credstore.
struct LineInjectionTests {
    /// The review's netrc entry: a quoted password whose `\n` escapes become real line breaks.
    static let injectedNetrc = #"""
        machine evil.example.com login alice password "pw\nhost=github.com\nusername=mallory\npassword=planted"
        machine good.example.com login bob password fine

        """#

    /// `git credential fill` for `host`, with credstore on `store` as git's only helper.
    private func gitFill(_ host: String, in sandbox: Sandbox) throws -> RunResult {
        let helper = "\(Sandbox.binary.path) git-credential --store \(sandbox.store.path)"
        return try runProgram("/usr/bin/git", ["-c", "credential.helper=", "-c", "credential.helper=\(helper)", "credential", "fill"],
                              stdin: "protocol=https\nhost=\(host)\n\n", in: sandbox,
                              environment: ["GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": ""])
    }

    @Test func anInjectedNetrcPasswordIsRefusedAndNeverReachesGit() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/git"), "git is not installed: run .ci/setup")
        let sandbox = try Sandbox()
        let file = sandbox.root.appendingPathComponent("netrc")
        try Self.injectedNetrc.write(to: file, atomically: true, encoding: .utf8)

        let imported = try sandbox.run(["netrc", "import", file.path] + sandbox.storeArguments)
        #expect(imported.status == 65, "\(imported.stderr)")
        #expect(imported.stderr.contains("line 1: skipped machine \"evil.example.com\""), "\(imported.stderr)")
        #expect(!imported.stderr.contains("planted") && !imported.stderr.contains("mallory"), "no value in the note")
        #expect(imported.stdout == "Imported 1 credential from \(file.path) (skipped 1; see above)\n")

        // git, asking for the attacker's host, gets nothing to use (and certainly no other host).
        let evil = try gitFill("evil.example.com", in: sandbox)
        #expect(!evil.stdout.contains("mallory") && !evil.stdout.contains("planted") && !evil.stdout.contains("github.com"), "\(evil.stdout)")
        #expect(evil.status != 0, "no credential, no prompt: git fails")
        // The honest entry of the same file works end to end.
        let good = try gitFill("good.example.com", in: sandbox)
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stdout == "protocol=https\nhost=good.example.com\nusername=bob\npassword=fine\n")
    }

    @Test func addRefusesALineBreakingPasswordOrUser() throws {
        let sandbox = try Sandbox()
        // A password file with CRLF line endings: the CR would have become part of the password.
        let crlf = try sandbox.run(["add", "https://api.example.com", "--user", "alice"] + sandbox.storeArguments, stdin: "pw\r\n")
        #expect(crlf.status == 65)
        #expect(crlf.stderrIsOneErrorLine)
        let user = try sandbox.run(["add", "https://api.example.com", "--user", "alice\nhost=x"] + sandbox.storeArguments, stdin: "pw\n")
        #expect(user.status == 65)
        #expect(try sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout == "[]\n")
    }

    @Test func gitCredentialStoreRefusesALineBreakingValue() throws {
        let sandbox = try Sandbox()
        let origin = "protocol=https\nhost=git.example.com\nusername=alice\n"
        // git itself never sends a CR inside a value; a helper must not trust that.
        let stored = try sandbox.run(["git-credential", "store"], stdin: origin + "password=pw\rquit=1\n\n")
        #expect(stored.status == 65, "\(stored.stderr)")
        #expect(stored.stderrIsOneErrorLine)
        let token = try sandbox.run(["git-credential", "store"], stdin: origin + "password=pw\noauth_refresh_token=t\r\n\n")
        #expect(token.status == 65, "\(token.stderr)")
        #expect(try sandbox.run(["git-credential", "get"], stdin: "protocol=https\nhost=git.example.com\n\n").stdout == "")
    }

    @Test func theRefreshTokenRoundTripsAsAFieldOfTheCredential() throws {
        let sandbox = try Sandbox()
        let origin = "protocol=https\nhost=git.example.com\n"
        let token = "gho_a&b=c%d +/é"
        let stored = try sandbox.run(["git-credential", "store"],
                                     stdin: origin + "username=alice\npassword=pw\npassword_expiry_utc=4102444800\noauth_refresh_token=\(token)\n\n")
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(try sandbox.run(["git-credential", "get"], stdin: origin + "\n").stdout
            == "username=alice\npassword=pw\npassword_expiry_utc=4102444800\noauth_refresh_token=\(token)\n")
        // One entry: no hidden companion beside it.
        let listed = try sandbox.run(["list", "--json"])
        #expect(!listed.stdout.contains("git-credential-meta"))
        #expect(listed.stdout.components(separatedBy: "\"user\"").count == 2, "\(listed.stdout)")
    }

    /// A store written before the rules (here: the library's mutation, below `set`'s check) may
    /// hold a line-breaking password; nothing prints it where it would break a line.
    @Test func aLineBreakingValueAlreadyStoredIsNeverPrintedRaw() throws {
        let sandbox = try Sandbox()
        let injected = "pw\nhost=github.com\nusername=mallory\npassword=planted"
        let space = ProtectionSpace(host: "evil.example.com", port: 443, protocol: "https", realm: nil)
        do {
            let storage = try CredentialStorage(
                at: sandbox.store, key: .keyFile(sandbox.store.deletingLastPathComponent().appendingPathComponent("store.key")),
                rollbackAnchor: .none)
            try storage.setWithoutValidation(Credential(user: "alice", password: injected, persistence: .permanent), for: space)
        }

        let git = try sandbox.run(["git-credential", "--store", sandbox.store.path, "get"], stdin: "protocol=https\nhost=evil.example.com\n\n")
        #expect(git.status == 65)
        #expect(git.stdout == "", "nothing on git's channel")
        #expect(!git.stderr.contains("planted"))

        let plain = try sandbox.run(["get", "https://evil.example.com"] + sandbox.storeArguments)
        #expect(plain.status == 65 && plain.stdout == "")
        let json = try sandbox.run(["get", "https://evil.example.com", "--json"] + sandbox.storeArguments)
        #expect(try jsonObject(json.stdout)["password"] as? String == injected)

        let exported = try sandbox.run(["netrc", "export", sandbox.root.appendingPathComponent("out.netrc").path] + sandbox.storeArguments)
        #expect(exported.status == 65)
        #expect(!(try String(contentsOf: sandbox.root.appendingPathComponent("out.netrc"), encoding: .utf8)).contains("planted"))
    }

    @Test func theGitAnswerIsCheckedRightBeforeItIsWritten() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(throws: FormatError.self) {
            try GitCredentialRequest.answer(Credential(user: "alice", password: "pw", refreshToken: "t\nquit=1"), now: now)
        }
        #expect(throws: FormatError.self) {
            try GitCredentialRequest.answer(Credential(user: "alice", password: "pw\u{0}x", persistence: .permanent), now: now)
        }
        #expect(try GitCredentialRequest.answer(Credential(user: "alice", password: "p w", persistence: .permanent), now: now)
            == "username=alice\npassword=p w\n")
    }

    /// C1 controls (U+0080–U+009F: U+009B is CSI) act on terminals even UTF-8 encoded.
    /// A user name with a zero-width space, a soft hyphen or a byte-order mark shows them escaped:
    /// `eve` and `eve\u{200B}` are two credentials, and must not look like one.
    @Test func invisibleCharactersAreShownEscaped() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "eve", password: "pw1")
        for user in ["eve\u{200B}", "e\u{AD}ve", "\u{FEFF}eve", "eve\u{2028}"] {
            try sandbox.add("https://api.example.com", user: user, password: "pw2")
        }
        let listed = try sandbox.run(["list"] + sandbox.storeArguments)
        for escaped in [#"eve\u{200B}"#, #"e\u{00AD}ve"#, #"\u{FEFF}eve"#, #"eve\u{2028}"#] {
            #expect(listed.stdout.contains(escaped), "\(escaped) in \(listed.stdout)")
        }
        #expect(!listed.stdout.unicodeScalars.contains { [0x200B, 0xAD, 0xFEFF, 0x2028].contains($0.value) })
        let json = try sandbox.run(["list", "--json"] + sandbox.storeArguments)
        #expect(!json.stdout.unicodeScalars.contains { [0x200B, 0xAD, 0xFEFF, 0x2028].contains($0.value) })
        #expect(Set(try jsonArray(json.stdout).compactMap { $0["user"] as? String }).count == 5, "escaped, not altered")
    }

    @Test func listAndErrorsEscapeC1ControlsAsWellAsC0AndDEL() throws {
        let sandbox = try Sandbox()
        let realm = "\u{9B}31mred\u{1B}]0;title\u{7}\u{7F}"
        try sandbox.add("https://api.example.com", user: "u\u{85}ser\u{202E}", password: "pw", ["--realm", realm])

        let listed = try sandbox.run(["list"] + sandbox.storeArguments)
        #expect(listed.status == 0)
        #expect(!listed.stdout.unicodeScalars.contains { (0x80...0x9F).contains($0.value) || $0.value == 0x1B || $0.value == 0x7F || $0.value == 0x202E },
                "\(listed.stdout.debugDescription)")
        #expect(listed.stdout.contains(#"\u{009B}31mred\u{1B}]0;title\u{07}\u{7F}"#), "\(listed.stdout)")
        #expect(listed.stdout.contains(#"u\u{0085}ser\u{202E}"#), "\(listed.stdout)")

        let json = try sandbox.run(["list", "--json"] + sandbox.storeArguments)
        #expect(!json.stdout.unicodeScalars.contains { (0x80...0x9F).contains($0.value) }, "\(json.stdout.debugDescription)")
        #expect(try jsonArray(json.stdout).first?["realm"] as? String == realm, "escaped, not altered")

        // An error message quoting the realm given on the command line.
        let missing = try sandbox.run(["get", "https://api.example.com", "--realm", "\u{9B}2J", "--user", "x\u{9B}"] + sandbox.storeArguments)
        #expect(missing.status == 1)
        #expect(missing.stderrIsOneErrorLine)
        #expect(!missing.stderr.unicodeScalars.contains { (0x80...0x9F).contains($0.value) }, "\(missing.stderr.debugDescription)")

        // The `watch` line of a change to that space.
        let change = CredentialChange(kind: .added, space: ProtectionSpace(host: "api.example.com", port: 443, protocol: "https", realm: realm),
                                      user: "u\u{9B}", persistence: .permanent, origin: .thisProcess)
        #expect(!WatchCommand.line(change, at: Date()).unicodeScalars.contains { FieldRules.isDisplayControl($0) })
    }
}
