import Foundation
import Testing

/// `credstore passwd`.
struct PasswdCommandTests {
    @Test func passwdReplacesThePassphrase() throws {
        let sandbox = try Sandbox()
        let old = ["CREDSTORE_PASSPHRASE": "old phrase"]
        #expect(try sandbox.run(["init", "--passphrase"] + sandbox.storeArguments, environment: old).status == 0)
        #expect(try sandbox.run(["add", "https://api.example.com", "--user", "alice"] + sandbox.storeArguments, stdin: "pw\n", environment: old).status == 0)

        let changed = try sandbox.run(["passwd"] + sandbox.storeArguments, environment: old.merging(["CREDSTORE_NEW_PASSPHRASE": "new phrase"]) { $1 })
        #expect(changed.status == 0)
        #expect(changed.stderr.isEmpty)
        #expect(!changed.stdout.contains("phrase\n"))

        let withOld = try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments, environment: old)
        #expect(withOld.status == 77)
        #expect(withOld.stderrIsOneErrorLine)
        #expect(!withOld.stderr.contains("old phrase"))
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments, environment: ["CREDSTORE_PASSPHRASE": "new phrase"]).stdout == "pw\n")
    }

    @Test func passwdWithoutANewPassphraseOrTerminalExits64() throws {
        let sandbox = try Sandbox()
        let old = ["CREDSTORE_PASSPHRASE": "old phrase"]
        #expect(try sandbox.run(["init", "--passphrase"] + sandbox.storeArguments, environment: old).status == 0)
        let result = try sandbox.run(["passwd"] + sandbox.storeArguments, environment: old)
        #expect(result.status == 64)
        #expect(result.stderr.contains("CREDSTORE_NEW_PASSPHRASE"))
    }

    @Test func aKeyFileStoreHasNoPassphraseToChange() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw")
        let result = try sandbox.run(["passwd"] + sandbox.storeArguments, environment: ["CREDSTORE_NEW_PASSPHRASE": "x"])
        #expect(result.status == 64)
        #expect(result.stderrIsOneErrorLine)
        #expect(try sandbox.run(["passwd", "--store", sandbox.root.appendingPathComponent("none.db").path]).status == 1)
    }
}
