import Foundation
import Testing

/// `credstore add`, run as a new user would run it.
struct AddCommandTests {
    @Test func aNewUserAddsAndGetsOnTheEmbeddedDefaultStoreWithNoSetUp() throws {
        let sandbox = try Sandbox()
        let added = try sandbox.run(["add", "https://api.example.com", "--user", "alice"], stdin: "s3cret\n")
        #expect(added.status == 0)
        #expect(added.stdout.isEmpty)
        #expect(added.stderr.isEmpty)

        let got = try sandbox.run(["get", "https://api.example.com"])
        #expect(got.status == 0)
        #expect(got.stdout == "s3cret\n")
        #expect(got.stderr.isEmpty)

        // The default store and its key file, private to the user.
        let folder = sandbox.defaultStore.deletingLastPathComponent()
        #expect(sandbox.mode(of: sandbox.defaultStore) == 0o600)
        #expect(sandbox.mode(of: folder.appendingPathComponent("store.key")) == 0o600)
        #expect(sandbox.mode(of: folder) == 0o700)
    }

    @Test func thePasswordIsOneLineOfStdinWithoutItsNewline() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: " pass word \nnot this line")
        let got = try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments)
        #expect(got.stdout == " pass word \n")
    }

    @Test func aPasswordWithoutATrailingNewlineIsTakenWhole() throws {
        let sandbox = try Sandbox()
        let added = try sandbox.run(["add", "https://api.example.com", "--user", "alice"] + sandbox.storeArguments, stdin: "no-newline")
        #expect(added.status == 0)
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).stdout == "no-newline\n")
    }

    @Test func emptyStdinStoresNothingAndExits65() throws {
        let sandbox = try Sandbox()
        for stdin in ["", "\n"] {
            let added = try sandbox.run(["add", "https://api.example.com", "--user", "alice"] + sandbox.storeArguments, stdin: stdin)
            #expect(added.status == 65)
            #expect(added.stderrIsOneErrorLine)
        }
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).status == 1)
    }

    @Test func aMalformedURLExits65AndCreatesNoStore() throws {
        let sandbox = try Sandbox()
        for url in ["api.example.com", "not a url", "https://", "mailto:alice"] {
            let added = try sandbox.run(["add", url, "--user", "alice"] + sandbox.storeArguments, stdin: "pw\n")
            #expect(added.status == 65, "\(url)")
            #expect(added.stderrIsOneErrorLine)
            #expect(added.stderr.contains("is not a URL with a host"))
        }
        #expect(!FileManager.default.fileExists(atPath: sandbox.store.path))
    }

    @Test func aPasswordInTheURLIsRefusedAndNotRepeated() throws {
        let sandbox = try Sandbox()
        let added = try sandbox.run(["add", "https://alice:hunter2@api.example.com", "--user", "alice"] + sandbox.storeArguments, stdin: "pw\n")
        #expect(added.status == 65)
        #expect(added.stderrIsOneErrorLine)
        #expect(!added.stderr.contains("hunter2"))
    }

    @Test func defaultFlagMakesTheNewCredentialTheDefault() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-alice")
        try sandbox.add("https://api.example.com", user: "bob", password: "pw-bob")
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).stdout == "pw-alice\n")
        try sandbox.add("https://api.example.com", user: "carol", password: "pw-carol", ["--default"])
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).stdout == "pw-carol\n")
    }

    @Test func addingAUserAgainReplacesThePassword() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "old")
        try sandbox.add("https://api.example.com", user: "alice", password: "new")
        #expect(try sandbox.run(["get", "https://api.example.com", "--user", "alice"] + sandbox.storeArguments).stdout == "new\n")
        #expect(try jsonArray(sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout).count == 1)
    }

    @Test func methodPersistenceAndProxyOptionsNameTheSpace() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "basic-pw", ["--method", "basic", "--realm", "API", "--persistence", "synchronizable"])
        try sandbox.add("http://proxy.example.com:3128", user: "bob", password: "proxy-pw", ["--proxy", "http"])

        let entries = try jsonArray(sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout)
        let api = try #require(entries.first { $0["user"] as? String == "alice" })
        #expect(api["method"] as? String == "basic")
        #expect(api["realm"] as? String == "API")
        #expect(api["persistence"] as? String == "synchronizable")
        let proxy = try #require(entries.first { $0["user"] as? String == "bob" })
        #expect(proxy["proxyType"] as? String == "http")
        #expect(proxy["port"] as? Int == 3128)
        #expect(proxy["protocol"] is NSNull)

        // A proxy space is not the server space of the same URL.
        #expect(try sandbox.run(["get", "http://proxy.example.com:3128"] + sandbox.storeArguments).status == 1)
        #expect(try sandbox.run(["get", "http://proxy.example.com:3128", "--proxy", "http"] + sandbox.storeArguments).stdout == "proxy-pw\n")
        #expect(try sandbox.run(["get", "https://api.example.com", "--realm", "API", "--method", "basic"] + sandbox.storeArguments).stdout == "basic-pw\n")
    }

    @Test func usageErrorsExit64InOneLine() throws {
        let sandbox = try Sandbox()
        let cases: [[String]] = [
            ["add", "https://api.example.com"],
            ["add", "https://api.example.com", "--user", "alice", "--persistence", "forever"],
            ["add", "https://api.example.com", "--user", "alice", "--method", "kerberos"],
            ["add", "https://api.example.com", "--user", ""],
            ["add", "https://api.example.com", "--user", "alice", "--password", "oops"],
        ]
        for arguments in cases {
            let result = try sandbox.run(arguments + sandbox.storeArguments, stdin: "pw\n")
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderrIsOneErrorLine, "\(result.stderr)")
            #expect(result.stderr.contains("credstore help add"))
        }
    }
}
