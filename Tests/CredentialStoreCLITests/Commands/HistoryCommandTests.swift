import CredentialStore
import CredentialStoreTestSupport
import Foundation
import Testing

/// `credstore history` and the conflict notes of `sync`: a change that lost a concurrent edit on
/// another machine is named, kept, listed without its password, and can be restored everywhere.
struct HistoryCommandTests {
    let laptop: Sandbox
    let desktop: Sandbox
    let shared: URL
    let url = "https://api.example.com"

    init() throws {
        laptop = try Sandbox()
        desktop = try Sandbox()
        shared = laptop.root.appendingPathComponent("shared", isDirectory: true)
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        let keys = try [laptop, desktop].map { machine in
            #expect(try machine.run(["init"] + machine.storeArguments).status == 0)
            let shown = try machine.run(["device", "show", "--json"] + machine.storeArguments)
            return try #require(try jsonObject(shown.stdout)["publicKey"] as? String)
        }
        #expect(try laptop.run(["device", "trust", keys[1]] + laptop.storeArguments).status == 0)
        #expect(try desktop.run(["device", "trust", keys[0]] + desktop.storeArguments).status == 0)
    }

    private func sync(_ machine: Sandbox, json: Bool = false) throws -> RunResult {
        let result = try machine.run(["sync", shared.path] + (json ? ["--json"] : []) + machine.storeArguments)
        #expect(result.status == 0, "sync failed: \(result.stderr)")
        return result
    }

    private func history(_ machine: Sandbox, _ more: [String] = []) throws -> RunResult {
        try machine.run(["history", url, "--user", "alice"] + more + machine.storeArguments)
    }

    private func password(_ machine: Sandbox) throws -> String {
        String(try machine.run(["get", url, "--user", "alice"] + machine.storeArguments).stdout.dropLast())
    }

    @Test func syncNamesTheLosingEditHistoryListsItAndARestoreWinsEverywhere() throws {
        try laptop.add(url, user: "alice", password: "pw-laptop", ["--persistence", "synchronizable"])
        usleep(20_000)
        try desktop.add(url, user: "alice", password: "pw-desktop", ["--persistence", "synchronizable"])

        _ = try sync(laptop)
        let desktopRound = try sync(desktop)
        #expect(!desktopRound.stderr.contains("conflict"), "the desktop's edit won: \(desktopRound.stderr)")
        let laptopRound = try sync(laptop, json: true)

        // The laptop's edit lost: sync names the credential (never a password) and the command to see it.
        #expect(laptopRound.stderr.contains("conflict: alice's credential at https://api.example.com:443"), "\(laptopRound.stderr)")
        #expect(laptopRound.stderr.contains("credstore history https://api.example.com:443 --user alice"), "\(laptopRound.stderr)")
        let total = try #require(try jsonObject(laptopRound.stdout)["total"] as? [String: Any])
        let conflicts = try #require(total["conflicts"] as? [[String: Any]])
        #expect(conflicts.count == 1 && conflicts.first?["user"] as? String == "alice" && conflicts.first?["kept"] as? Bool == true)
        for output in [laptopRound.stdout, laptopRound.stderr] {
            #expect(!output.contains("pw-laptop") && !output.contains("pw-desktop"))
        }
        #expect(try password(laptop) == "pw-desktop")

        // history lists it without the password; --show prints it.
        let listed = try history(laptop)
        #expect(listed.status == 0)
        #expect(listed.stdout.contains("1  written") && listed.stdout.contains("by this device"), "\(listed.stdout)")
        #expect(!listed.stdout.contains("pw-laptop"))
        let json = try jsonArray(try history(laptop, ["--json"]).stdout)
        #expect(json.count == 1 && json.first?["password"] == nil)
        #expect(try history(laptop, ["--show", "1"]).stdout == "pw-laptop\n")
        let missing = try history(laptop, ["--show", "2"])
        #expect(missing.status == 1 && missing.stderrIsOneErrorLine, "\(missing.stderr)")
        #expect(missing.stderr.contains("credstore history https://api.example.com:443 --user alice"))

        // --restore is a new write that the next syncs carry everywhere, with no conflict.
        let restored = try history(laptop, ["--restore", "1"])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try password(laptop) == "pw-laptop")
        _ = try sync(laptop)
        let carried = try sync(desktop)
        #expect(!carried.stderr.contains("conflict"), "\(carried.stderr)")
        #expect(try password(desktop) == "pw-laptop")
        #expect(try history(desktop).stdout.hasPrefix("No kept versions"))
    }

    @Test func removingTheCredentialRemovesItsHistory() throws {
        try laptop.add(url, user: "alice", password: "pw-laptop", ["--persistence", "synchronizable"])
        usleep(20_000)
        try desktop.add(url, user: "alice", password: "pw-desktop", ["--persistence", "synchronizable"])
        _ = try sync(desktop)
        _ = try sync(laptop)
        #expect(try history(laptop).stdout.contains("1  written"))

        let removed = try laptop.run(["remove", url, "--user", "alice", "--synchronizable"] + laptop.storeArguments)
        #expect(removed.status == 0)
        #expect(try history(laptop, ["--show", "1"]).status == 1)
        #expect(try history(laptop).stdout.hasPrefix("No kept versions"))
    }
}
