import Foundation
import Testing

/// A fleet that has nothing new to say leaves its shared folder as it was, and a user's explicit
/// choice of default always reaches the fleet, even when this machine already had it.
struct QuietSyncCommandTests {
    private let url = "https://api.example.com"

    /// Every file of the folder with its bytes.
    private func snapshot(_ folder: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            files[name] = try Data(contentsOf: folder.appendingPathComponent(name))
        }
        return files
    }

    @Test func aQuietSyncLeavesTheFolderByteForByteUnchanged() throws {
        let fleet = try SyncCommandTests.Fleet()
        try fleet.trustEachOther()
        try fleet.machines[0].add(url, user: "alice", password: "a", ["--persistence", "synchronizable"])
        try fleet.machines[1].add(url, user: "bob", password: "b", ["--persistence", "synchronizable", "--label", "B"])
        // Until every machine holds everything: two rounds.
        for _ in 0..<2 { for index in 0..<3 { _ = try fleet.sync(index) } }
        let before = try snapshot(fleet.shared)
        #expect(before.count == 3)

        for index in [2, 0, 1, 0] {
            let quiet = try jsonObject(try fleet.sync(index).stdout)
            #expect(quiet["changed"] as? Bool == false, "machine \(index): \(quiet)")
        }
        #expect(try snapshot(fleet.shared) == before, "a quiet round rewrote a bundle")

        // Something new: the writer's bundle changes, and only it.
        try fleet.machines[2].add(url, user: "carol", password: "c", ["--persistence", "synchronizable"])
        let loud = try jsonObject(try fleet.sync(2).stdout)
        #expect(loud["changed"] as? Bool == true)
        let after = try snapshot(fleet.shared)
        let changed = after.keys.filter { after[$0] != before[$0] }
        #expect(changed == [loud["wrote"] as? String].compactMap { $0 }, "\(changed)")
    }

    @Test func anExplicitDefaultChoiceIsAlwaysAWrite() throws {
        let fleet = try SyncCommandTests.Fleet()
        try fleet.trustEachOther()
        let (a, b) = (fleet.machines[0], fleet.machines[1])
        try a.add(url, user: "alice", password: "pa", ["--persistence", "synchronizable"])
        try a.add(url, user: "bob", password: "pb", ["--persistence", "synchronizable"])
        for index in [0, 1, 0] { _ = try fleet.sync(index) }
        #expect(try b.run(["get", url] + b.storeArguments).stdout == "pa\n", "alice is everyone's default")

        // B chooses bob; later A chooses alice, who is already A's default. The later choice wins.
        #expect(try b.run(["default", url, "--user", "bob"] + b.storeArguments).status == 0)
        Thread.sleep(forTimeInterval: 0.01)
        #expect(try a.run(["default", url, "--user", "alice"] + a.storeArguments).status == 0)
        for index in [1, 0, 1, 2] { _ = try fleet.sync(index) }
        for index in 0..<3 {
            let got = try fleet.machines[index].run(["get", url] + fleet.machines[index].storeArguments)
            #expect(got.stdout == "pa\n", "machine \(index) answers \(got.stdout)")
        }
    }

    @Test func aRetiredDevicesBundleGetsOneNoteThatSaysHowToRetireIt() throws {
        let fleet = try SyncCommandTests.Fleet()
        try fleet.trustEachOther()
        for index in 0..<3 { _ = try fleet.sync(index) }
        let reinstalled = fleet.machines[2]
        let oldKey = try fleet.publicKey(2)
        let oldID = try #require(try jsonObject(reinstalled.run(["device", "show", "--json"] + reinstalled.storeArguments).stdout)["deviceId"] as? String)

        // Machine 2 is reinstalled: a new store, a new device key, the old bundle left in the folder.
        try FileManager.default.removeItem(at: reinstalled.store.deletingLastPathComponent())
        try FileManager.default.removeItem(at: reinstalled.root.appendingPathComponent("home"))
        let newKey = try fleet.publicKey(2)
        for (index, machine) in fleet.machines.enumerated() where index != 2 {
            #expect(try machine.run(["device", "trust", newKey] + machine.storeArguments).status == 0)
            #expect(try reinstalled.run(["device", "trust", try fleet.publicKey(index)] + reinstalled.storeArguments).status == 0)
        }
        let oldBundle = fleet.shared.appendingPathComponent("\(oldID).csbundle").path
        _ = try fleet.sync(0)
        _ = try fleet.sync(1)
        // On the new install: the old bundle was never sealed to it.
        let note = try fleet.sync(2).stderr
        #expect(note.hasPrefix("credstore: skipped \(oldID).csbundle: the bundle was not sealed to this store"), "\(note)")
        #expect(note.hasSuffix("; if that device is retired (an old install), delete \(oldBundle)\n"), "\(note)")
        #expect(note.filter { $0 == "\n" }.count == 1, "one note: \(note)")

        // A machine that stops trusting the old key gets one note, with the same way to retire it.
        #expect(try fleet.machines[0].run(["device", "untrust", oldKey] + fleet.machines[0].storeArguments).status == 0)
        let untrusted = try fleet.sync(0).stderr
        #expect(untrusted.hasPrefix("credstore: skipped \(oldID).csbundle: the bundle is signed by a revoked device (\(oldKey), revoked by this store on "), "\(untrusted)")
        #expect(untrusted.hasSuffix("if the device is retired, delete \(oldBundle)\n"), "\(untrusted)")
        #expect(untrusted.filter { $0 == "\n" }.count == 1, "one note: \(untrusted)")

        // Following it: the file goes. The revocation reaches the other machine with machine 0's
        // bundle, which says so once; then no machine notes anything again.
        try FileManager.default.removeItem(atPath: oldBundle)
        let relayed = try fleet.sync(1).stderr
        #expect(relayed.contains("\(oldKey) was revoked by \(try fleet.publicKey(0))"), "\(relayed)")
        #expect(relayed.filter { $0 == "\n" }.count == 1, "one note: \(relayed)")
        for index in [0, 1, 2, 2] {
            #expect(try fleet.sync(index).stderr.isEmpty, "machine \(index) still notes something")
        }
    }
}
