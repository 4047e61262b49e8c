import Foundation
import Testing

/// Every answer is checked against the seal tree, not only at open. With `sqlite3` and
/// no key, an attacker deletes a row of a space, puts back an older copy of one, or copies one in
/// from another store; `get` and `git-credential get` of that space exit 77 and print nothing,
/// and the rest of the store keeps answering.
struct SealedLookupCommandTests {
    let api = "https://api.example.com"
    let other = "https://other.example.com"

    /// alice (the default) and bob on api.example.com, carol on other.example.com.
    private func sandbox() throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.add(api, user: "alice", password: "pw-alice")
        try sandbox.add(api, user: "bob", password: "pw-bob")
        try sandbox.add(other, user: "carol", password: "pw-carol")
        return sandbox
    }

    private func gitGet(_ sandbox: Sandbox, host: String) throws -> RunResult {
        try sandbox.run(["git-credential", "get"], stdin: "protocol=https\nhost=\(host)\n\n",
                        environment: ["CREDSTORE_STORE": sandbox.store.path])
    }

    /// Every form of lookup of api.example.com exits 77 with one error line and prints no
    /// password; other.example.com still answers, by `get` and by the git helper.
    private func expectRefusedAndTheRestUsable(_ sandbox: Sandbox, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for arguments in [["get", api], ["get", api, "--user", "alice"], ["get", api, "--user", "bob"], ["get", api, "--json"],
                          ["get", api, "--method", "basic"]] {
            let got = try sandbox.run(arguments + sandbox.storeArguments)
            #expect(got.status == 77, "\(arguments): \(got.status) \(got.stderr)", sourceLocation: sourceLocation)
            #expect(got.stdout.isEmpty, "\(arguments)", sourceLocation: sourceLocation)
            #expect(got.stderrIsOneErrorLine, "\(arguments)", sourceLocation: sourceLocation)
            #expect(!got.stderr.contains("pw-"), sourceLocation: sourceLocation)
        }
        let git = try gitGet(sandbox, host: "api.example.com")
        #expect(git.status == 77, "git-credential get: \(git.status) \(git.stderr)", sourceLocation: sourceLocation)
        #expect(!git.stdout.contains("pw-"), sourceLocation: sourceLocation)

        let untouched = try sandbox.run(["get", other] + sandbox.storeArguments)
        #expect(untouched.status == 0 && untouched.stdout == "pw-carol\n", "\(untouched.stderr)", sourceLocation: sourceLocation)
        let untouchedGit = try gitGet(sandbox, host: "other.example.com")
        #expect(untouchedGit.status == 0 && untouchedGit.stdout.contains("password=pw-carol\n"), sourceLocation: sourceLocation)
        // A write elsewhere still works, and is read back.
        try sandbox.add("https://third.example.com", user: "dave", password: "pw-dave")
        #expect(try sandbox.run(["get", "https://third.example.com"] + sandbox.storeArguments).stdout == "pw-dave\n", sourceLocation: sourceLocation)
        #expect(try sandbox.run(["verify"] + sandbox.storeArguments).status == 77, sourceLocation: sourceLocation)
    }

    /// The api space's rows: the space that holds two credentials.
    private let apiRows = "space_index = (SELECT space_index FROM credentials GROUP BY space_index HAVING count(*) = 2)"

    @Test func aDeletedRowIsRefused() throws {
        let sandbox = try sandbox()
        // bob's row: not the default, so the default choice does not dangle; alice's row still answers on its own.
        try sandbox.sqlite("DELETE FROM credentials WHERE \(apiRows) AND user_index NOT IN (SELECT user_index FROM default_choices)")
        try expectRefusedAndTheRestUsable(sandbox)
    }

    @Test func aRowRestoredFromAnOlderCopyOfTheStoreIsRefused() throws {
        let sandbox = try sandbox()
        let older = sandbox.root.appendingPathComponent("older.db").path
        // An older copy of the store's rows, kept outside it.
        try sandbox.sqlite("ATTACH '\(older)' AS older; CREATE TABLE older.credentials AS SELECT * FROM main.credentials;")
        try sandbox.add(api, user: "alice", password: "pw-alice-new")
        #expect(try sandbox.run(["get", api] + sandbox.storeArguments).stdout == "pw-alice-new\n")
        // alice's old row put back: authentic on its own (same store, same keys, same place).
        try sandbox.sqlite("ATTACH '\(older)' AS older; INSERT OR REPLACE INTO main.credentials SELECT * FROM older.credentials;")
        try expectRefusedAndTheRestUsable(sandbox)
    }

    @Test func aRowCopiedInFromAnotherStoreIsRefused() throws {
        let sandbox = try sandbox()
        let foreign = try Sandbox()
        try foreign.add(api, user: "mallory", password: "pw-mallory")
        let copy = sandbox.root.appendingPathComponent("foreign.db").path
        try foreign.sqlite("ATTACH '\(copy)' AS copy; CREATE TABLE copy.credentials AS SELECT * FROM main.credentials;")
        // Copied into the api space, under the indexes this store gave it, so that its lookups read it.
        try sandbox.sqlite("""
            ATTACH '\(copy)' AS copy;
            INSERT INTO main.credentials (space_index, user_index, origin_index, persistence, created, modified, sealed_space, sealed_credential)
            SELECT (SELECT space_index FROM main.credentials WHERE \(apiRows) LIMIT 1), c.user_index,
                (SELECT origin_index FROM main.credentials WHERE \(apiRows) LIMIT 1), c.persistence, c.created, c.modified,
                c.sealed_space, c.sealed_credential FROM copy.credentials AS c;
            """)
        try expectRefusedAndTheRestUsable(sandbox)
    }
}
