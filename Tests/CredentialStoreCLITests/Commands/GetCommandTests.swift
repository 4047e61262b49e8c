import Foundation
import Testing

/// `credstore get`: the password for a URL, for scripts.
struct GetCommandTests {
    @Test func nothingStoredExits1WithoutCreatingAStore() throws {
        let sandbox = try Sandbox()
        let got = try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments)
        #expect(got.status == 1)
        #expect(got.stdout.isEmpty)
        #expect(got.stderrIsOneErrorLine)
        #expect(got.stderr.contains("credstore add https://api.example.com"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.store.path))
    }

    @Test func anUnknownUserExits1() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw")
        let got = try sandbox.run(["get", "https://api.example.com", "--user", "mallory"] + sandbox.storeArguments)
        #expect(got.status == 1)
        #expect(got.stdout.isEmpty)
        #expect(got.stderrIsOneErrorLine)
        #expect(got.stderr.contains("mallory"))
    }

    /// A scheme without a default port reads as port 0 when the URL names none: the miss says
    /// where the same host has a credential, and names neither another host's nor a password.
    @Test func aMissWhoseOnlyDifferenceIsThePortNamesThePortThatHasOne() throws {
        let sandbox = try Sandbox()
        // A connection pooler's port beside the database's own, the likeliest slip.
        try sandbox.add("postgres://db.internal:6432", user: "app", password: "pg-secret")
        try sandbox.add("postgres://other.internal:6433", user: "app", password: "other-secret")
        for arguments in [["get", "postgres://db.internal"], ["get", "postgres://db.internal", "--user", "app"]] {
            let got = try sandbox.run(arguments + sandbox.storeArguments)
            #expect(got.status == 1)
            #expect(got.stderrIsOneErrorLine)
            #expect(got.stderr.contains("postgres://db.internal:6432"), "the port that has one is not named: \(got.stderr)")
            #expect(!got.stderr.contains("other.internal") && !got.stderr.contains("secret"))
        }
        // Another user there is no hint.
        let other = try sandbox.run(["get", "postgres://db.internal", "--user", "nobody"] + sandbox.storeArguments)
        #expect(other.status == 1 && !other.stderr.contains(":6432"), "\(other.stderr)")
        // Nor is a port whose credential is kept for Digest, which a `get` without a method
        // would not answer there either.
        try sandbox.add("postgres://db.internal:7432", user: "app", password: "digest-secret", ["--method", "digest"])
        let hinted = try sandbox.run(["get", "postgres://db.internal"] + sandbox.storeArguments)
        #expect(hinted.stderr.contains(":6432") && !hinted.stderr.contains(":7432"), "\(hinted.stderr)")
    }

    /// `--user` finds the user where a `get` without it would: a credential stored for Basic
    /// answers a URL that names no method, so the advice is never to add a second copy.
    @Test func aUserKeptForBasicIsFoundByName() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://h.example.com", user: "b1", password: "pb1", ["--method", "basic"])
        #expect(try sandbox.run(["get", "https://h.example.com", "--user", "b1"] + sandbox.storeArguments).stdout == "pb1\n")
        // The users of a Basic space without a default are named, with the method that picks one.
        for user in ["b2", "b3"] { try sandbox.add("https://h.example.com", user: user, password: "p\(user)", ["--method", "basic"]) }
        #expect(try sandbox.run(["remove", "https://h.example.com", "--user", "b1", "--method", "basic"] + sandbox.storeArguments).status == 0)
        let got = try sandbox.run(["get", "https://h.example.com"] + sandbox.storeArguments)
        #expect(got.status == 1 && got.stderr.contains("holds credentials of b2, b3"), "\(got.stderr)")
        #expect(got.stderr.contains("credstore default https://h.example.com --method basic --user NAME"), "\(got.stderr)")
        #expect(try sandbox.run(["default", "https://h.example.com", "--method", "basic", "--user", "b3"] + sandbox.storeArguments).status == 0)
        #expect(try sandbox.run(["get", "https://h.example.com"] + sandbox.storeArguments).stdout == "pb3\n")
    }

    /// With `--user`, as without: an expired credential of the user in the space asked for does
    /// not hide the user's live one stored for Basic.
    @Test func anExpiredCredentialOfTheUserDoesNotHideALiveOneForBasic() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://h.example.com", user: "b1", password: "pb1", ["--method", "basic"])
        let expired = try sandbox.run(["add", "https://h.example.com", "--user", "b1", "--expires", "2001-01-01T00:00:00Z"] + sandbox.storeArguments, stdin: "stale\n")
        #expect(expired.status == 0, "\(expired.stderr)")
        #expect(try sandbox.run(["get", "https://h.example.com", "--user", "b1"] + sandbox.storeArguments).stdout == "pb1\n")
    }

    /// A space whose credentials have no default (the one chosen was removed, several remain):
    /// the miss names its users and how to pick one, rather than telling the user to add one.
    @Test func aSpaceWithCredentialsButNoDefaultSaysHowToPickOne() throws {
        let sandbox = try Sandbox()
        let url = "https://api.example.com"
        for user in ["alice", "bob", "carol"] { try sandbox.add(url, user: user, password: "pw-\(user)") }
        #expect(try sandbox.run(["remove", url, "--user", "alice"] + sandbox.storeArguments).status == 0)
        let got = try sandbox.run(["get", url] + sandbox.storeArguments)
        #expect(got.status == 1)
        #expect(got.stderrIsOneErrorLine)
        #expect(got.stderr.contains("holds credentials of bob, carol and none is its default"), "\(got.stderr)")
        #expect(got.stderr.contains("credstore default \(url) --user NAME") && !got.stderr.contains("pw-"), "\(got.stderr)")
        #expect(try sandbox.run(["default", url, "--user", "carol"] + sandbox.storeArguments).status == 0)
        #expect(try sandbox.run(["get", url] + sandbox.storeArguments).stdout == "pw-carol\n")
    }

    @Test(arguments: [
        ("postgres", 5432), ("postgresql", 5432), ("mysql", 3306), ("redis", 6379), ("amqp", 5672), ("amqps", 5671),
        ("ldap", 389), ("ldaps", 636), ("imap", 143), ("imaps", 993), ("smtp", 25), ("smtps", 465), ("ssh", 22), ("ftp", 21),
    ])
    func aURLWithoutAPortIsItsSchemesRegisteredPort(scheme: String, port: Int) throws {
        let sandbox = try Sandbox()
        try sandbox.add("\(scheme)://db.internal", user: "app", password: "pw-\(scheme)")
        for url in ["\(scheme)://db.internal:\(port)", "\(scheme)://db.internal"] {
            let got = try sandbox.run(["get", url] + sandbox.storeArguments)
            #expect(got.status == 0 && got.stdout == "pw-\(scheme)\n", "\(url): \(got.stderr)")
        }
        let listed = try sandbox.run(["list", "--json"] + sandbox.storeArguments)
        #expect(listed.stdout.contains("\"port\":\(port)"), "\(listed.stdout)")
        // git's request names the protocol and host alone, and means the same space.
        let git = try sandbox.run(["git-credential", "get"] + sandbox.storeArguments,
                                  stdin: "protocol=\(scheme)\nhost=db.internal\n\n")
        #expect(git.stdout.contains("password=pw-\(scheme)\n"), "\(git.stdout) \(git.stderr)")
    }

    @Test func userPicksThatUsersPassword() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-alice")
        try sandbox.add("https://api.example.com", user: "bob", password: "pw-bob")
        #expect(try sandbox.run(["get", "https://api.example.com", "--user", "bob"] + sandbox.storeArguments).stdout == "pw-bob\n")
        #expect(try sandbox.run(["get", "https://api.example.com/some/path?q=1", "--user=bob", "--store=\(sandbox.store.path)"]).stdout == "pw-bob\n")
    }

    @Test func anAmbiguousMatchBetweenTwoRealmsExits65AndNamesThem() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-a", ["--realm", "Staff"])
        try sandbox.add("https://api.example.com", user: "bob", password: "pw-b", ["--realm", "Guests"])

        let got = try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments)
        #expect(got.status == 65)
        #expect(got.stdout.isEmpty)
        #expect(got.stderrIsOneErrorLine)
        #expect(got.stderr.contains("\"Staff\"") && got.stderr.contains("\"Guests\""))
        #expect(got.stderr.contains("--realm"))
        #expect(!got.stderr.contains("pw-"))

        #expect(try sandbox.run(["get", "https://api.example.com", "--realm", "Guests"] + sandbox.storeArguments).stdout == "pw-b\n")
    }

    /// The advice of a miss (of `get`, `default` and `edit`) adds the credential the command
    /// asked for: with its realm, method and proxy type, not the bare URL's, each word quoted for
    /// the shell where it needs to be.
    @Test func aMissAdvisesAnAddOfTheSpaceItLookedFor() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-a")
        let got = try sandbox.run(["get", "https://api.example.com", "--realm", "Bob's Realm", "--method", "digest"] + sandbox.storeArguments)
        #expect(got.status == 1)
        #expect(got.stderr.contains("`credstore add https://api.example.com --realm 'Bob'\\''s Realm' --method digest --user NAME`"), "\(got.stderr)")
        let proxied = try sandbox.run(["get", "http://proxy.example.com:3128", "--proxy", "http"] + sandbox.storeArguments)
        #expect(proxied.status == 1)
        #expect(proxied.stderr.contains("`credstore add http://proxy.example.com:3128 --proxy http --user NAME`"), "\(proxied.stderr)")
        // Pasted into bash, the advised words are the words looked up: a quote, a tab, a control
        // character and a bidirectional override in the realm, the user name given.
        let realm = "Bob's\tArea\u{1}\u{202E}x"
        let odd = try sandbox.run(["get", "https://api.example.com", "--realm", realm, "--user", "o'neil"] + sandbox.storeArguments)
        #expect(odd.status == 1)
        let advised = try #require(odd.stderr.components(separatedBy: "`credstore add ").last?.components(separatedBy: "`").first, "\(odd.stderr)")
        let words = try sandbox.runProgram(URL(fileURLWithPath: "/bin/bash"), ["-c", #"eval "set -- $1"; printf '%s\0' "$@""#, "bash", advised],
                                           environment: ["LC_ALL": "C.UTF-8"])
        #expect(words.stdout.split(separator: "\0", omittingEmptySubsequences: false).dropLast().map(String.init)
                == ["https://api.example.com", "--realm", realm, "--user", "o'neil"], "\(advised)")
        for command in [["default"], ["edit", "--label", "work"]] {
            let missed = try sandbox.run(command + ["https://api.example.com", "--user", "o'neil", "--realm", "R"] + sandbox.storeArguments)
            #expect(missed.status == 1)
            #expect(missed.stderr.contains("`credstore add https://api.example.com --realm R --user 'o'\\''neil'`"), "\(command): \(missed.stderr)")
        }
    }

    @Test func withoutARealmTheOneRealmWithADefaultAnswers() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-a", ["--realm", "Staff"])
        let got = try sandbox.run(["get", "https://api.example.com", "--json"] + sandbox.storeArguments)
        #expect(got.status == 0)
        let object = try jsonObject(got.stdout)
        let space = try #require(object["space"] as? [String: Any])
        #expect(space["realm"] as? String == "Staff")
        // A realm that does not exist is not a best-match request: nothing matched.
        #expect(try sandbox.run(["get", "https://api.example.com", "--realm", "Other"] + sandbox.storeArguments).status == 1)
    }

    /// `--json` names the space that answered: a credential stored for Basic answering a lookup
    /// without a method is Basic's, and a Digest-only default of the same user (which a lookup
    /// without a method never sends) is not named as the answer.
    @Test func jsonNamesTheSpaceThatAnswered() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "basic-pw", ["--method", "basic"])
        var object = try jsonObject(try sandbox.run(["get", "https://api.example.com", "--json"] + sandbox.storeArguments).stdout)
        #expect(object["password"] as? String == "basic-pw")
        #expect((object["space"] as? [String: Any])?["method"] as? String == "basic")

        let other = try Sandbox()
        try other.add("https://api.example.com", user: "alice", password: "digest-pw", ["--realm", "Staff", "--method", "digest"])
        try other.add("https://api.example.com", user: "alice", password: "basic-pw", ["--realm", "Staff", "--method", "basic"])
        object = try jsonObject(try other.run(["get", "https://api.example.com", "--json"] + other.storeArguments).stdout)
        #expect(object["password"] as? String == "basic-pw")
        #expect((object["space"] as? [String: Any])?["method"] as? String == "basic")
    }

    /// `any` names the space without a method; `default`, its earlier word, is still read (scripts
    /// written before keep working) and never offered; the JSON outputs keep `"default"`, their
    /// word for it, while tables say `any`.
    @Test func theMethodWordAnyAndItsEarlierWordDefaultNameTheSameSpace() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-a", ["--method", "default"])
        for word in ["any", "default"] {
            #expect(try sandbox.run(["get", "https://api.example.com", "--method", word] + sandbox.storeArguments).stdout == "pw-a\n")
        }
        let listed = try sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout
        #expect(listed.contains("\"method\":\"default\""))
        let table = try sandbox.run(["list"] + sandbox.storeArguments).stdout
        #expect(table.contains(" any ") && !table.contains(" default "))
        let refused = try sandbox.run(["get", "https://api.example.com", "--method", "bogus"] + sandbox.storeArguments)
        #expect(refused.status == 64 && refused.stderr.contains("any") && !refused.stderr.contains("- default"))
    }

    @Test func jsonHasTheDocumentedSchema() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://API.example.com:8443", user: "alice", password: "p\"w\\\u{1}é", ["--method", "digest"])
        let got = try sandbox.run(["get", "https://api.example.com:8443", "--method", "digest", "--json"] + sandbox.storeArguments)
        #expect(got.status == 0)
        #expect(got.stdout.hasSuffix("}\n") && got.stdout.filter { $0 == "\n" }.count == 1)
        #expect(keyOrder(got.stdout[...]) == ["user", "password", "space", "expires", "expired", "label", "comment", "attributes", "refreshToken"])

        let object = try jsonObject(got.stdout)
        #expect(object["user"] as? String == "alice")
        #expect(object["password"] as? String == "p\"w\\\u{1}é")
        let space = try #require(object["space"] as? [String: Any])
        #expect(Set(space.keys) == ["host", "port", "protocol", "realm", "method", "proxyType"])
        #expect(space["host"] as? String == "api.example.com")
        #expect(space["port"] as? Int == 8443)
        #expect(space["protocol"] as? String == "https")
        #expect(space["realm"] is NSNull)
        #expect(space["method"] as? String == "digest")
        #expect(space["proxyType"] is NSNull)
    }

    @Test func globalOptionsComeFromTheEnvironmentToo() throws {
        let sandbox = try Sandbox()
        let keyFile = sandbox.root.appendingPathComponent("keys/my.key")
        try sandbox.add("https://api.example.com", user: "alice", password: "pw", ["--key-file", keyFile.path])
        #expect(FileManager.default.fileExists(atPath: keyFile.path))

        let environment = ["CREDSTORE_STORE": sandbox.store.path, "CREDSTORE_KEY_FILE": keyFile.path]
        let got = try sandbox.run(["get", "https://api.example.com"], environment: environment)
        #expect(got.stdout == "pw\n")
        // The option wins over the environment.
        let other = try sandbox.run(["get", "https://api.example.com", "--store", sandbox.root.appendingPathComponent("none.db").path], environment: environment)
        #expect(other.status == 1)
    }

    @Test func aMalformedURLExits65() throws {
        let sandbox = try Sandbox()
        let got = try sandbox.run(["get", "example.com"] + sandbox.storeArguments)
        #expect(got.status == 65)
        #expect(got.stderr == "credstore: \"example.com\" is not a URL with a host; give a URL such as https://example.com\n")
    }
}
