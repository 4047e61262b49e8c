import Foundation
import Testing

/// Changing a password keeps what the command does not name — the tier, the label, the comment,
/// the attributes, the expiry, the refresh token — on every path that writes one (`add`, `edit`,
/// `import --from … --overwrite`, `netrc import`, the git helper); leaving the synchronizable tier
/// removes the credential from the fleet and needs `--synchronizable`, as `remove` does.
struct WriteKeepsUnnamedCommandTests {
    private let url = "https://a.example.com"

    /// The one credential `list --json` shows for user u.
    private func entry(_ sandbox: Sandbox) throws -> [String: Any] {
        let listed = try sandbox.run(["list", "--json"] + sandbox.storeArguments)
        #expect(listed.status == 0, "\(listed.stderr)")
        return try #require(try jsonArray(listed.stdout).first { $0["user"] as? String == "u" })
    }

    private func addDetailed(_ sandbox: Sandbox) throws {
        try sandbox.add(url, user: "u", password: "old", [
            "--persistence", "synchronizable", "--label", "L1", "--comment", "note", "--attr", "env=prod",
            "--expires", "2099-01-01T00:00:00Z",
        ])
    }

    private func expectDetailsKept(_ sandbox: Sandbox, _ what: String) throws {
        let listed = try entry(sandbox)
        #expect(listed["persistence"] as? String == "synchronizable", "\(what): \(listed)")
        #expect(listed["label"] as? String == "L1", "\(what): \(listed)")
        #expect(listed["comment"] as? String == "note", "\(what): \(listed)")
        #expect(listed["attributes"] as? [String: String] == ["env": "prod"], "\(what): \(listed)")
        #expect(listed["expires"] as? String == "2099-01-01T00:00:00Z", "\(what): \(listed)")
    }

    @Test func reAddingAPasswordKeepsTheCredentialInTheFleet() throws {
        let fleet = try SyncCommandTests.Fleet()
        try fleet.trustEachOther()
        let (laptop, desktop) = (fleet.machines[0], fleet.machines[1])
        try addDetailed(laptop)
        _ = try fleet.sync(0)
        _ = try fleet.sync(1)
        #expect(try fleet.passwords(1, url, users: ["u"]) == ["u": "old"])

        // A new password, nothing else named.
        try laptop.add(url, user: "u", password: "new")
        try expectDetailsKept(laptop, "after add")
        _ = try fleet.sync(0)
        let merged = try jsonObject(try fleet.sync(1).stdout)
        #expect(merged["removed"] as? Int ?? 0 == 0, "the other machine lost it: \(merged)")
        #expect(try fleet.passwords(1, url, users: ["u"]) == ["u": "new"])
        try expectDetailsKept(desktop, "on the other machine")
    }

    @Test func leavingTheSynchronizableTierNeedsSynchronizable() throws {
        let sandbox = try Sandbox()
        try addDetailed(sandbox)
        let refused = try sandbox.run(["add", url, "--user", "u", "--persistence", "permanent"] + sandbox.storeArguments, stdin: "new\n")
        #expect(refused.status == 64)
        #expect(refused.stderrIsOneErrorLine, "\(refused.stderr)")
        #expect(refused.stderr.contains("--synchronizable"), "\(refused.stderr)")
        #expect(try sandbox.run(["get", url] + sandbox.storeArguments).stdout == "old\n", "nothing changed")
        try expectDetailsKept(sandbox, "after the refusal")

        // The advised command works.
        let confirmed = try sandbox.run(["add", url, "--user", "u", "--persistence", "permanent", "--synchronizable"] + sandbox.storeArguments,
                                        stdin: "new\n")
        #expect(confirmed.status == 0, "\(confirmed.stderr)")
        #expect(try entry(sandbox)["persistence"] as? String == "permanent")
        #expect(try entry(sandbox)["label"] as? String == "L1", "the details stay")
    }

    @Test func editChangesDetailsAndTierWithoutThePassword() throws {
        let sandbox = try Sandbox()
        try addDetailed(sandbox)
        let edited = try sandbox.run(["edit", url, "--user", "u", "--label", "L2", "--remove-attr", "env", "--attr", "team=infra",
                                      "--expires", "never", "--comment", ""] + sandbox.storeArguments)
        #expect(edited.status == 0, "\(edited.stderr)")
        let listed = try entry(sandbox)
        #expect(listed["label"] as? String == "L2")
        #expect(listed["comment"] is NSNull)
        #expect(listed["expires"] is NSNull)
        #expect(listed["attributes"] as? [String: String] == ["team": "infra"])
        #expect(listed["persistence"] as? String == "synchronizable")
        #expect(try sandbox.run(["get", url] + sandbox.storeArguments).stdout == "old\n", "the password is untouched")

        let refused = try sandbox.run(["edit", url, "--user", "u", "--persistence", "permanent"] + sandbox.storeArguments)
        #expect(refused.status == 64 && refused.stderr.contains("--synchronizable"), "\(refused.stderr)")
        let moved = try sandbox.run(["edit", url, "--user", "u", "--persistence", "permanent", "--synchronizable"] + sandbox.storeArguments)
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(try entry(sandbox)["persistence"] as? String == "permanent")

        let missing = try sandbox.run(["edit", url, "--user", "nobody", "--label", "x"] + sandbox.storeArguments)
        #expect(missing.status == 1 && missing.stderrIsOneErrorLine, "\(missing.stderr)")
        let nothing = try sandbox.run(["edit", url, "--user", "u"] + sandbox.storeArguments)
        #expect(nothing.status == 64, "\(nothing.stderr)")
    }

    @Test func importingOverACredentialKeepsItsTierAndDetails() throws {
        let sandbox = try Sandbox()
        try addDetailed(sandbox)
        let file = sandbox.root.appendingPathComponent("git-credentials")
        try "https://u:imported@a.example.com\n".write(to: file, atomically: true, encoding: .utf8)
        let imported = try sandbox.run(["import", file.path, "--from", "git-credentials", "--overwrite"] + sandbox.storeArguments)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try sandbox.run(["get", url] + sandbox.storeArguments).stdout == "imported\n")
        try expectDetailsKept(sandbox, "after import --overwrite")

        let netrc = sandbox.root.appendingPathComponent("netrc")
        try "machine a.example.com login u password from-netrc\n".write(to: netrc, atomically: true, encoding: .utf8)
        let fromNetrc = try sandbox.run(["netrc", "import", netrc.path] + sandbox.storeArguments)
        #expect(fromNetrc.status == 0, "\(fromNetrc.stderr)")
        #expect(try sandbox.run(["get", url] + sandbox.storeArguments).stdout == "from-netrc\n")
        try expectDetailsKept(sandbox, "after netrc import")

        // Naming another tier for a synchronizable credential is refused, and nothing is imported.
        try "https://u:again@a.example.com\n".write(to: file, atomically: true, encoding: .utf8)
        let refused = try sandbox.run(["import", file.path, "--from", "git-credentials", "--overwrite", "--persistence", "permanent"]
                                      + sandbox.storeArguments)
        #expect(refused.status == 64 && refused.stderrIsOneErrorLine, "\(refused.stderr)")
        #expect(try sandbox.run(["get", url] + sandbox.storeArguments).stdout == "from-netrc\n")
    }

    @Test func gitsApprovalKeepsTheTierAndTheUsersDetails() throws {
        let sandbox = try Sandbox()
        try sandbox.add(url, user: "u", password: "old", ["--persistence", "synchronizable", "--label", "L1", "--attr", "env=prod"])
        let stored = try sandbox.run(["git-credential", "store"] + sandbox.storeArguments,
                                     stdin: "protocol=https\nhost=a.example.com\nusername=u\npassword=rotated\n\n")
        #expect(stored.status == 0, "\(stored.stderr)")
        let listed = try entry(sandbox)
        #expect(listed["persistence"] as? String == "synchronizable")
        #expect(listed["label"] as? String == "L1")
        #expect(listed["attributes"] as? [String: String] == ["env": "prod"])
        #expect(try sandbox.run(["get", url] + sandbox.storeArguments).stdout == "rotated\n")
    }

    /// One range for every time a credential keeps, checked where it enters: a huge expiry once
    /// made every later listing trap (SIGILL), on this machine and on every one it synced to.
    @Test func anExpiryOutside1970Through9999IsRefusedAtTheDoor() throws {
        let sandbox = try Sandbox()
        try sandbox.add(url, user: "u", password: "pw")
        for expires in ["9223372036854775807s", "106751991167300d", "0000-01-01T00:00:00Z", "10000-01-01T00:00:00Z", "1969-12-31T23:59:59Z"] {
            let added = try sandbox.run(["add", url, "--user", "v", "--expires", expires] + sandbox.storeArguments, stdin: "pw\n")
            #expect(added.status == 64 && added.stderrIsOneErrorLine, "add --expires \(expires): \(added.status) \(added.stderr)")
            let edited = try sandbox.run(["edit", url, "--user", "u", "--expires", expires] + sandbox.storeArguments)
            #expect(edited.status == 64 && edited.stderrIsOneErrorLine, "edit --expires \(expires): \(edited.status) \(edited.stderr)")
        }
        #expect(try sandbox.run(["add", url, "--user", "v", "--expires", "9999-12-31T23:59:59Z"] + sandbox.storeArguments, stdin: "pw\n").status == 0)
        let listed = try sandbox.run(["list", "--json"] + sandbox.storeArguments)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(try jsonArray(listed.stdout).count == 2)
    }
}
