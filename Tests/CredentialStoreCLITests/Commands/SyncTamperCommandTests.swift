import Foundation
import Testing

/// Sync state tampering as it was reported: with only `sqlite3` and no key, deleting the sync
/// registers of one store (all of them, or only those of deleted items) and running `credstore
/// sync` on it and then on the other store made both serve an older password again, or brought back
/// a removed credential, and `verify` found nothing. Replaying an older bundle did the same.
struct SyncTamperCommandTests {
    let url = "https://api.example.com"

    /// Two machines that trust each other, sharing a folder; `alice` synchronizable on both.
    private func fleet() throws -> SyncCommandTests.Fleet {
        let fleet = try SyncCommandTests.Fleet()
        try fleet.trustEachOther()
        return fleet
    }

    private func sync(_ fleet: SyncCommandTests.Fleet, _ index: Int) throws -> RunResult {
        try fleet.machines[index].run(["sync", fleet.shared.path] + fleet.machines[index].storeArguments)
    }

    private func password(_ fleet: SyncCommandTests.Fleet, _ index: Int, _ user: String) throws -> String? {
        let got = try fleet.machines[index].run(["get", url, "--user", user] + fleet.machines[index].storeArguments)
        return got.status == 0 ? String(got.stdout.dropLast()) : nil
    }

    private func bundle(_ fleet: SyncCommandTests.Fleet, of index: Int) throws -> URL {
        let shown = try fleet.machines[index].run(["device", "show", "--json"] + fleet.machines[index].storeArguments)
        let id = try #require(try jsonObject(shown.stdout)["deviceId"] as? String)
        return fleet.shared.appendingPathComponent("\(id).csbundle")
    }

    /// The tampered machine refuses `sync` and `verify` with exit 77 and one error line.
    private func expectTamperRefused(_ fleet: SyncCommandTests.Fleet, _ index: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let synced = try sync(fleet, index)
        #expect(synced.status == 77 && synced.stderrIsOneErrorLine, "sync: \(synced.status) \(synced.stderr)", sourceLocation: sourceLocation)
        let verified = try fleet.machines[index].run(["verify"] + fleet.machines[index].storeArguments)
        #expect(verified.status == 77, "verify: \(verified.status) \(verified.stdout)", sourceLocation: sourceLocation)
    }

    @Test func deletedRegistersNeverBringBackAnOlderPassword() throws {
        let fleet = try fleet()
        let s1 = fleet.machines[0]
        try s1.add(url, user: "alice", password: "old-password", ["--persistence", "synchronizable"])
        for index in [0, 1] { #expect(try sync(fleet, index).status == 0) }
        let olderBundleOfS2 = try Data(contentsOf: try bundle(fleet, of: 1))
        try s1.add(url, user: "alice", password: "new-password", ["--persistence", "synchronizable"])
        #expect(try sync(fleet, 0).status == 0)

        try s1.sqlite("DELETE FROM sync_items")
        try expectTamperRefused(fleet, 0)
        #expect(try sync(fleet, 1).status == 0)
        #expect(try password(fleet, 0, "alice") == "new-password")
        #expect(try password(fleet, 1, "alice") == "new-password")

        // An older bundle of S2 put back in the folder changes nothing either.
        try olderBundleOfS2.write(to: try bundle(fleet, of: 1))
        try expectTamperRefused(fleet, 0)
        #expect(try password(fleet, 0, "alice") == "new-password")
        #expect(try password(fleet, 1, "alice") == "new-password")
    }

    @Test func deletedTombstonesNeverBringBackARemovedCredential() throws {
        let fleet = try fleet()
        let s1 = fleet.machines[0]
        try s1.add(url, user: "keeper", password: "k", ["--persistence", "synchronizable"])
        try s1.add(url, user: "bob", password: "bob-password", ["--persistence", "synchronizable"])
        for index in [0, 1] { #expect(try sync(fleet, index).status == 0) }
        let olderBundleOfS2 = try Data(contentsOf: try bundle(fleet, of: 1))
        let removed = try s1.run(["remove", url, "--user", "bob", "--synchronizable"] + s1.storeArguments)
        #expect(removed.status == 0)
        #expect(try sync(fleet, 0).status == 0)

        // Only the registers of deleted items.
        try s1.sqlite("DELETE FROM sync_items WHERE deleted = 1")
        try expectTamperRefused(fleet, 0)
        #expect(try sync(fleet, 1).status == 0)
        #expect(try password(fleet, 0, "bob") == nil)
        #expect(try password(fleet, 1, "bob") == nil)

        try olderBundleOfS2.write(to: try bundle(fleet, of: 1))
        try expectTamperRefused(fleet, 0)
        #expect(try password(fleet, 0, "bob") == nil)
        #expect(try password(fleet, 1, "keeper") == "k")
    }
}
