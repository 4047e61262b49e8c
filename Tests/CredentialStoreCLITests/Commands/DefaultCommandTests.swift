import Testing

/// `credstore default`.
struct DefaultCommandTests {
    @Test func defaultChangesWhatGetAnswers() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-alice")
        try sandbox.add("https://api.example.com", user: "bob", password: "pw-bob")
        let chosen = try sandbox.run(["default", "https://api.example.com", "--user", "bob"] + sandbox.storeArguments)
        #expect(chosen.status == 0)
        #expect(chosen.stdout.isEmpty && chosen.stderr.isEmpty)
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).stdout == "pw-bob\n")

        let entries = try jsonArray(sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout)
        #expect(entries.filter { $0["isDefault"] as? Bool == true }.map { $0["user"] as? String } == ["bob"])
    }

    @Test func anUnknownUserExits1AndChangesNothing() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-alice")
        let result = try sandbox.run(["default", "https://api.example.com", "--user", "mallory"] + sandbox.storeArguments)
        #expect(result.status == 1)
        #expect(result.stderrIsOneErrorLine)
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).stdout == "pw-alice\n")
        #expect(try sandbox.run(["get", "https://api.example.com", "--user", "mallory"] + sandbox.storeArguments).status == 1)
    }

    @Test func theRealmSelectsTheSpace() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-a", ["--realm", "Staff"])
        try sandbox.add("https://api.example.com", user: "bob", password: "pw-b", ["--realm", "Staff"])
        #expect(try sandbox.run(["default", "https://api.example.com", "--user", "bob"] + sandbox.storeArguments).status == 1)
        #expect(try sandbox.run(["default", "https://api.example.com", "--user", "bob", "--realm", "Staff"] + sandbox.storeArguments).status == 0)
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).stdout == "pw-b\n")
    }
}
