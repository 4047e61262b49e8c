import Foundation
import Testing

/// `add --expires/--refresh-token/--label/--comment/--attr`, `get --json`, `list` and `search`.
struct CredentialDetailsCommandTests {
    @Test func addKeepsEveryDetailAndGetJSONShowsThem() throws {
        let sandbox = try Sandbox()
        let added = try sandbox.run(
            ["add", "https://api.example.com", "--user", "app", "--expires", "2099-12-31T00:00:00Z", "--refresh-token",
             "--label", "API token", "--comment", "rotated monthly", "--attr", "env=prod", "--attr", "team=infra"] + sandbox.storeArguments,
            stdin: "access-secret\nrefresh-secret\n")
        #expect(added.status == 0, "\(added.stderr)")
        let got = try sandbox.run(["get", "https://api.example.com", "--json"] + sandbox.storeArguments)
        let object = try jsonObject(got.stdout)
        #expect(object["password"] as? String == "access-secret")
        #expect(object["refreshToken"] as? String == "refresh-secret")
        #expect(object["expires"] as? String == "2099-12-31T00:00:00Z")
        #expect(object["expired"] as? Bool == false)
        #expect(object["label"] as? String == "API token")
        #expect(object["comment"] as? String == "rotated monthly")
        #expect(object["attributes"] as? [String: String] == ["env": "prod", "team": "infra"])
        // The list shows the expiry and label, never the password or the refresh token.
        let listed = try sandbox.run(["list"] + sandbox.storeArguments)
        #expect(listed.stdout.contains("2099-12-31T00:00:00Z") && listed.stdout.contains("API token"))
        #expect(!listed.stdout.contains("secret"))
        let json = try sandbox.run(["list", "--json"] + sandbox.storeArguments)
        #expect(!json.stdout.contains("secret"))
        #expect(try jsonArray(json.stdout).first?["hasRefreshToken"] as? Bool == true)
    }

    /// `NAME=VALUE` splits at the first `=` scalar, as the shell wrote it, even where a combining
    /// mark after it makes the two one Character.
    @Test func anAttributeValueThatStartsWithACombiningMarkIsKeptWhole() throws {
        let sandbox = try Sandbox()
        let added = try sandbox.run(["add", "https://api.example.com", "--user", "app", "--attr", "note=\u{301}a=b"] + sandbox.storeArguments,
                                    stdin: "pw\n")
        #expect(added.status == 0, "\(added.stderr)")
        let got = try jsonObject(sandbox.run(["get", "https://api.example.com", "--json"] + sandbox.storeArguments).stdout)
        #expect(got["attributes"] as? [String: String] == ["note": "\u{301}a=b"])
    }

    @Test func anExpiredCredentialIsNoDefaultButAnExplicitUserFindsIt() throws {
        let sandbox = try Sandbox()
        let added = try sandbox.run(["add", "https://old.example.com", "--user", "u", "--expires", "2001-01-01T00:00:00Z"] + sandbox.storeArguments,
                                    stdin: "stale\n")
        #expect(added.status == 0, "\(added.stderr)")
        // Expired, not missing (ExpiredCredentialCommandTests has the rest).
        #expect(try sandbox.run(["get", "https://old.example.com"] + sandbox.storeArguments).status == 75)
        let explicit = try sandbox.run(["get", "https://old.example.com", "--user", "u", "--json"] + sandbox.storeArguments)
        #expect(explicit.status == 75)
        #expect(try jsonObject(explicit.stdout)["expired"] as? Bool == true)
        let listed = try sandbox.run(["list"] + sandbox.storeArguments)
        #expect(listed.stdout.contains("2001-01-01T00:00:00Z (expired)"))
    }

    @Test func searchAndListFiltersSelectByHostPatternLabelAttributeTierAndExpiry() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://a.example.com", user: "one", password: "p1", ["--label", "work", "--attr", "env=prod"])
        try sandbox.add("https://b.example.com", user: "two", password: "p2", ["--attr", "env=dev", "--persistence", "synchronizable"])
        try sandbox.add("https://example.org", user: "three", password: "p3", ["--expires", "2001-01-01T00:00:00Z", "--label", "work"])
        func users(_ arguments: [String]) throws -> [String] {
            let result = try sandbox.run(arguments + ["--json"] + sandbox.storeArguments)
            return try jsonArray(result.stdout).compactMap { $0["user"] as? String }.sorted()
        }
        #expect(try users(["search", "--host", "*.example.com"]) == ["one", "two"])
        #expect(try users(["search", "--label", "work"]) == ["one", "three"])
        #expect(try users(["search", "--attr", "env=prod"]) == ["one"])
        #expect(try users(["search", "--persistence", "synchronizable"]) == ["two"])
        #expect(try users(["list", "--expired"]) == ["three"])
        #expect(try users(["search", "--label", "work", "--host", "*.example.com"]) == ["one"])
        let none = try sandbox.run(["search", "--label", "nothing"] + sandbox.storeArguments)
        #expect(none.status == 1)
        #expect(try sandbox.run(["list", "--label", "nothing"] + sandbox.storeArguments).status == 0)
    }

    @Test func badDetailsAreRefusedBeforeAnythingIsStoredAndTheRefreshTokenNeverComesFromArgv() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.run(["add", "https://x.example.com", "--user", "u", "--expires", "tomorrow"] + sandbox.storeArguments, stdin: "p\n").status == 64)
        #expect(try sandbox.run(["add", "https://x.example.com", "--user", "u", "--attr", "=v"] + sandbox.storeArguments, stdin: "p\n").status == 64)
        // --refresh-token is a flag: a value after it is not taken as the token.
        let argv = try sandbox.run(["add", "https://x.example.com", "--user", "u", "--refresh-token", "tok-in-argv"] + sandbox.storeArguments,
                                   stdin: "p\nt\n")
        #expect(argv.status == 64)
        #expect(try sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout == "[]\n")
        // An empty refresh token is refused as an empty password is.
        let injected = try sandbox.run(["add", "https://x.example.com", "--user", "u", "--refresh-token"] + sandbox.storeArguments,
                                       stdin: "p\n\n")
        #expect(injected.status == 65)
    }
}
