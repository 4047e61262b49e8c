import Foundation
import Testing

/// Row tampering as an attacker with `sqlite3` and no key plays it: every command that
/// answers from the store exits 77 rather than answer from an edited one.
struct StoreTamperCommandTests {
    /// alice (the default) and bob in one space; then alice's row goes, found by the user index
    /// the default choice names, and the default choice is left dangling.
    func storeWithTheDefaultsRowDeleted() throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-alice")
        try sandbox.add("https://api.example.com", user: "bob", password: "pw-bob")
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).stdout == "pw-alice\n")
        try sandbox.sqlite("DELETE FROM credentials WHERE user_index IN (SELECT user_index FROM default_choices)")
        return sandbox
    }

    @Test func getWithTheDefaultsRowDeletedExits77RatherThanPrintTheOtherUsersPassword() throws {
        let sandbox = try storeWithTheDefaultsRowDeleted()
        for arguments in [["get", "https://api.example.com"], ["get", "https://api.example.com/path"],
                          ["get", "https://api.example.com", "--user", "bob"], ["get", "https://api.example.com", "--json"]] {
            let got = try sandbox.run(arguments + sandbox.storeArguments)
            #expect(got.status == 77, "\(arguments)")
            #expect(got.stdout.isEmpty, "\(arguments)")
            #expect(got.stderrIsOneErrorLine, "\(arguments)")
            #expect(!got.stderr.contains("pw-"))
        }
    }

    @Test func everyOtherReaderExits77Too() throws {
        let sandbox = try storeWithTheDefaultsRowDeleted()
        #expect(try sandbox.run(["list"] + sandbox.storeArguments).status == 77)
        #expect(try sandbox.run(["verify"] + sandbox.storeArguments).status == 77)
        let netrc = sandbox.root.appendingPathComponent("exported.netrc").path
        #expect(try sandbox.run(["netrc", "export", netrc] + sandbox.storeArguments).status == 77)
        let git = try sandbox.run(["git-credential", "get"], stdin: "protocol=https\nhost=api.example.com\n\n",
                                  environment: ["CREDSTORE_STORE": sandbox.store.path])
        #expect(git.status == 77)
        #expect(!git.stdout.contains("pw-bob"))
    }

    /// A trigger planted with `sqlite3` that puts a removed row back.
    @Test func aTriggerThatKeepsARemovedPasswordMakesEveryCommandExit77() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-alice")
        try sandbox.sqlite("CREATE TRIGGER keep AFTER DELETE ON credentials BEGIN INSERT INTO credentials SELECT old.*; END")

        let removed = try sandbox.run(["remove", "https://api.example.com", "--user", "alice"] + sandbox.storeArguments)
        #expect(removed.status == 77)
        let got = try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments)
        #expect(got.status == 77)
        #expect(got.stdout.isEmpty)
        #expect(try sandbox.run(["list"] + sandbox.storeArguments).status == 77)
        #expect(try sandbox.run(["add", "https://other.example.com", "--user", "x"] + sandbox.storeArguments, stdin: "pw\n").status == 77)
    }

    @Test(arguments: ["CREATE VIEW peek AS SELECT * FROM credentials", "CREATE INDEX extra ON credentials (modified)",
                      "CREATE TABLE extra (x)", "DROP TABLE change_entries"])
    func anyOtherSchemaEditExits77(edit: String) throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-alice")
        try sandbox.sqlite(edit)
        let got = try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments)
        #expect(got.status == 77)
        #expect(got.stdout.isEmpty)
    }
}
