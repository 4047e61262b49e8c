import Foundation
import Testing

/// `credstore list`: every space and user, never a password.
struct ListCommandTests {
    @Test func listIsAnAlignedTableWithoutPasswords() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "secret-one")
        try sandbox.add("https://api.example.com", user: "bob", password: "secret-two", ["--realm", "Staff area", "--method", "basic"])
        try sandbox.add("http://proxy.example.com:3128", user: "carol", password: "secret-three", ["--proxy", "http", "--persistence", "synchronizable"])

        let listed = try sandbox.run(["list"] + sandbox.storeArguments)
        #expect(listed.status == 0)
        #expect(listed.stderr.isEmpty)
        #expect(!listed.stdout.contains("secret"))
        let lines = listed.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines[0].split(separator: " ", omittingEmptySubsequences: true) ==
                ["HOST", "PORT", "PROTOCOL", "REALM", "METHOD", "USER", "PERSISTENCE", "DEFAULT", "MODIFIED", "EXPIRES", "LABEL"])
        // Aligned: every column starts at the same offset on every line.
        for header in ["PORT", "PROTOCOL", "REALM", "METHOD", "USER", "PERSISTENCE"] {
            let column = try #require(lines[0].range(of: header)).lowerBound.utf16Offset(in: lines[0])
            for line in lines.dropFirst() {
                let index = line.index(line.startIndex, offsetBy: column)
                #expect(line[line.index(before: index)] == " ", "\(header) misaligned in \(line)")
                #expect(line[index] != " ", "\(header) misaligned in \(line)")
            }
        }
        #expect(lines[1].hasPrefix("api.example.com"))
        #expect(lines.contains { $0.contains("Staff area") && $0.contains("basic") && $0.contains("bob") })
        #expect(lines.contains { $0.contains("http proxy") && $0.contains("synchronizable") && $0.contains("carol") })
    }

    @Test func jsonHasTheDocumentedSchema() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "secret-one")
        try sandbox.add("https://api.example.com", user: "bob", password: "secret-two")

        let listed = try sandbox.run(["list", "--json"] + sandbox.storeArguments)
        #expect(listed.status == 0)
        #expect(!listed.stdout.contains("secret"))
        let firstObject = listed.stdout.dropFirst().prefix { $0 != "}" } + "}"
        #expect(keyOrder(firstObject) == ["host", "port", "protocol", "realm", "method", "proxyType", "user", "persistence", "isDefault", "created", "modified",
                                          "expires", "expired", "label", "comment", "attributes"])
        #expect(listed.stdout.contains("\"attributes\":{},\"hasRefreshToken\":false,\"kind\":\"password\"}"))

        let entries = try jsonArray(listed.stdout)
        #expect(entries.count == 2)
        let alice = try #require(entries.first)
        #expect(alice["host"] as? String == "api.example.com")
        #expect(alice["port"] as? Int == 443)
        #expect(alice["protocol"] as? String == "https")
        #expect(alice["realm"] is NSNull)
        #expect(alice["method"] as? String == "default", "JSON keeps its word for .default")
        #expect(alice["proxyType"] is NSNull)
        #expect(alice["user"] as? String == "alice")
        #expect(alice["persistence"] as? String == "permanent")
        #expect(alice["isDefault"] as? Bool == true)
        #expect(entries[1]["isDefault"] as? Bool == false)
        let created = try #require(alice["created"] as? String)
        #expect(ISO8601DateFormatter().date(from: created) != nil)
        #expect(ISO8601DateFormatter().date(from: try #require(alice["modified"] as? String)) != nil)
    }

    @Test func passwordsAndServerTrustAreListedApartWithTheirOwnColumns() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "secret-one")
        let pin = "sha256//" + Data(repeating: 7, count: 32).base64EncodedString()
        #expect(try sandbox.run(["pin", "add", "pinned.example.com", pin] + sandbox.storeArguments).status == 0)

        let listed = try sandbox.run(["list"] + sandbox.storeArguments)
        #expect(listed.status == 0, "\(listed.stderr)")
        let tables = listed.stdout.components(separatedBy: "\n\n")
        #expect(tables.count == 2, "\(listed.stdout)")
        #expect(tables.first?.hasPrefix("HOST ") == true && tables.first?.contains("alice") == true && tables.first?.contains("pinned") == false, "\(listed.stdout)")
        #expect(tables.last?.hasPrefix("SERVER TRUST FOR") == true && tables.last?.contains("pinned.example.com") == true, "\(listed.stdout)")
        #expect(!listed.stdout.contains("NSURLAuthenticationMethod"), "no method names meant for code")

        let json = try jsonArray(try sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout)
        #expect(Set(json.compactMap { $0["kind"] as? String }) == ["password", "serverTrust"])
    }

    @Test func anEmptyOrMissingStoreListsNothing() throws {
        let sandbox = try Sandbox()
        let listed = try sandbox.run(["list"] + sandbox.storeArguments)
        #expect(listed.status == 0)
        #expect(listed.stdout.isEmpty)
        #expect(try sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout == "[]\n")
        #expect(!FileManager.default.fileExists(atPath: sandbox.store.path))
    }
}
