import CredentialStore
import CredentialStoreTestSupport
import Foundation
import Testing

/// `credstore device untrust` on one machine revokes the device in the whole fleet: the
/// revocation travels in the bundles (docs/sync-format.md, "Revocation").
struct RevocationCommandTests {
    typealias Fleet = SyncCommandTests.Fleet

    @Test func anUntrustOnOneMachineKeepsEveryLaterPasswordFromTheRevokedDevice() throws {
        let fleet = try Fleet()
        try fleet.trustEachOther()
        let (a, b, c) = (0, 1, 2)
        let url = "https://vault.example.com"
        try fleet.machines[a].add(url, user: "alice", password: "before", ["--persistence", "synchronizable"])
        for index in [a, b, c, a, b, c] { _ = try fleet.sync(index) }
        #expect(try fleet.passwords(c, url, users: ["alice"]) == ["alice": "before"])

        // A alone revokes C, then stores a new password; everyone syncs in turn.
        let cKey = try fleet.publicKey(c), aKey = try fleet.publicKey(a)
        let untrust = try fleet.machines[a].run(["device", "untrust", cKey] + fleet.machines[a].storeArguments)
        #expect(untrust.status == 0, "\(untrust.stderr)")
        try fleet.machines[a].add(url, user: "bob", password: "after the untrust", ["--persistence", "synchronizable"])
        _ = try fleet.sync(a)
        let learnt = try fleet.machines[b].run(["sync", fleet.shared.path] + fleet.machines[b].storeArguments)
        #expect(learnt.status == 0, "\(learnt.stderr)")
        #expect(learnt.stderr.contains("\(cKey) was revoked by \(aKey)"), "B says what it learnt: \(learnt.stderr)")
        for index in [c, a, b, c] {
            let result = try fleet.machines[index].run(["sync", fleet.shared.path] + fleet.machines[index].storeArguments)
            #expect(result.status == 0, "\(result.stderr)")
        }

        // C reads neither bundle any more, and never got bob's password.
        #expect(try fleet.passwords(c, url, users: ["bob"]).isEmpty)
        #expect(try fleet.passwords(b, url, users: ["bob"]) == ["bob": "after the untrust"])
        for index in [a, b] {
            let id = try #require(try jsonObject(fleet.machines[index].run(["device", "show", "--json"] + fleet.machines[index].storeArguments).stdout)["deviceId"] as? String)
            let direct = try fleet.machines[c].run(["import", fleet.shared.appendingPathComponent("\(id).csbundle").path] + fleet.machines[c].storeArguments)
            #expect(direct.status == 77 && direct.stderr.contains("not sealed to this store"), "\(direct.stderr)")
        }

        // B lists C as revoked, by A, and no longer as trusted.
        let listed = try fleet.machines[b].run(["device", "list"] + fleet.machines[b].storeArguments)
        #expect(listed.status == 0, "\(listed.stderr)")
        let revokedSection = try #require(listed.stdout.components(separatedBy: "\n\n").last)
        #expect(revokedSection.hasPrefix("REVOKED KEY"), "\(listed.stdout)")
        #expect(revokedSection.contains(cKey) && revokedSection.contains(aKey), "\(listed.stdout)")
        #expect(try fleet.machines[b].run(["device", "list", "--json"] + fleet.machines[b].storeArguments).stdout.contains("\"status\":\"revoked\""))

        // No bundle is written for C by hand either, and the refusal says how to undo the revocation.
        let exported = try fleet.machines[a].run(["export", fleet.shared.appendingPathComponent("for-c.bundle").path, "--recipient", cKey]
            + fleet.machines[a].storeArguments)
        #expect(exported.status == 65 && exported.stderrIsOneErrorLine && exported.stderr.contains("run `credstore device trust` with that key"), "\(exported.stderr)")
        #expect(!FileManager.default.fileExists(atPath: fleet.shared.appendingPathComponent("for-c.bundle").path))

        // C cannot undo it: what it writes stays refused everywhere.
        try fleet.machines[c].add(url, user: "mallory", password: "planted", ["--persistence", "synchronizable"])
        _ = try fleet.machines[c].run(["sync", fleet.shared.path] + fleet.machines[c].storeArguments)
        for index in [a, b] {
            let merged = try fleet.machines[index].run(["sync", fleet.shared.path] + fleet.machines[index].storeArguments)
            #expect(merged.status == 0 && merged.stderr.contains("signed by a revoked device"), "\(merged.stderr)")
            #expect(try fleet.passwords(index, url, users: ["mallory"]).isEmpty)
        }

        // A trust on B brings C back there, and there only.
        #expect(try fleet.machines[b].run(["device", "trust", cKey] + fleet.machines[b].storeArguments).status == 0)
        for index in [b, c] { _ = try fleet.machines[index].run(["sync", fleet.shared.path] + fleet.machines[index].storeArguments) }
        #expect(try fleet.passwords(b, url, users: ["mallory"]) == ["mallory": "planted"])
        #expect(try fleet.passwords(a, url, users: ["mallory"]).isEmpty)
    }
}
