import Testing

/// `credstore remove`.
struct RemoveCommandTests {
    @Test func removeDeletesTheCredential() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw")
        let removed = try sandbox.run(["remove", "https://api.example.com", "--user", "alice"] + sandbox.storeArguments)
        #expect(removed.status == 0)
        #expect(removed.stdout.isEmpty && removed.stderr.isEmpty)
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).status == 1)
    }

    @Test func removingWhatIsNotThereExits1() throws {
        let sandbox = try Sandbox()
        let missingStore = try sandbox.run(["remove", "https://api.example.com", "--user", "alice"] + sandbox.storeArguments)
        #expect(missingStore.status == 1)
        #expect(missingStore.stderrIsOneErrorLine)

        try sandbox.add("https://api.example.com", user: "alice", password: "pw", ["--realm", "R"])
        for arguments in [["--user", "bob", "--realm", "R"], ["--user", "alice"], ["--user", "alice", "--realm", "r"]] {
            let result = try sandbox.run(["remove", "https://api.example.com"] + arguments + sandbox.storeArguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.stderrIsOneErrorLine)
        }
        #expect(try sandbox.run(["get", "https://api.example.com", "--realm", "R"] + sandbox.storeArguments).stdout == "pw\n")
    }

    /// `get URL` answers with a credential stored for Basic (any method falls back to it), so a
    /// `remove URL --user bob` that finds nothing in the space without a method says where bob's
    /// answering credential is, rather than leaving the user to think it is gone; `default` too.
    @Test func aMissNamesTheCompatibleMethodThatStillAnswers() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "bob", password: "pw", ["--method", "basic"])
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).stdout == "pw\n")

        for command in ["remove", "default"] {
            let missed = try sandbox.run([command, "https://api.example.com", "--user", "bob"] + sandbox.storeArguments)
            #expect(missed.status == 1)
            #expect(missed.stderrIsOneErrorLine)
            #expect(missed.stderr.contains("--method basic"), "\(command): \(missed.stderr)")
        }
        #expect(try sandbox.run(["remove", "https://api.example.com", "--user", "bob", "--method", "basic"] + sandbox.storeArguments).status == 0)
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).status == 1)
    }

    @Test func aSynchronizableCredentialNeedsTheFlag() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw", ["--persistence", "synchronizable"])

        let refused = try sandbox.run(["remove", "https://api.example.com", "--user", "alice"] + sandbox.storeArguments)
        #expect(refused.status == 64)
        #expect(refused.stderrIsOneErrorLine)
        #expect(refused.stderr.contains("--synchronizable"))
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).stdout == "pw\n")

        let removed = try sandbox.run(["remove", "https://api.example.com", "--user", "alice", "--synchronizable"] + sandbox.storeArguments)
        #expect(removed.status == 0)
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).status == 1)
    }
}
