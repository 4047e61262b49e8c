import Foundation
import Testing

/// One device identity per live store: a store copied into another home takes its own, and `sync`
/// never writes over a bundle that another live store with its identity wrote.
struct DeviceIdentityCommandTests {
    typealias Fleet = SyncCommandTests.Fleet

    private func deviceID(_ machine: Sandbox, _ store: URL? = nil) throws -> String {
        let shown = try machine.run(["device", "show", "--json", "--store", (store ?? machine.store).path])
        #expect(shown.status == 0, "device show failed: \(shown.stderr)")
        return try #require(try jsonObject(shown.stdout)["deviceId"] as? String)
    }

    private func publicKey(_ machine: Sandbox) throws -> String {
        let shown = try machine.run(["device", "show", "--json"] + machine.storeArguments)
        return try #require(try jsonObject(shown.stdout)["publicKey"] as? String)
    }

    /// Copies a store's folder (database, journal files, key file) to `store`'s folder.
    private func copyStore(from source: URL, to store: URL) throws {
        let folder = store.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: source.deletingLastPathComponent(), to: folder)
    }

    private func bundles(_ fleet: Fleet) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: fleet.shared.path).filter { $0.hasSuffix(".csbundle") }.sorted()
    }

    @Test func aStoreCopiedIntoAnotherHomeTakesItsOwnIdentityAndEveryMachineGetsTheChange() throws {
        let fleet = try Fleet()
        try fleet.trustEachOther()
        let (a, url) = (fleet.machines[0], "https://api.example.com")
        try a.add(url, user: "alice", password: "first", ["--persistence", "synchronizable"])
        for index in 0..<3 { _ = try fleet.sync(index) }

        // Machine D: A's store folder put in place by hand; D's home has no record of it.
        let d = try Sandbox()
        try copyStore(from: a.store, to: d.store)
        let shown = try d.run(["device", "show", "--json"] + d.storeArguments)
        #expect(shown.status == 0, "device show failed on the copy: \(shown.stderr)")
        let dID = try #require(try jsonObject(shown.stdout)["deviceId"] as? String)
        let aID = try deviceID(a)
        #expect(dID != aID, "the copy kept A's device id")
        let dKey = try #require(try jsonObject(shown.stdout)["publicKey"] as? String)
        #expect(shown.stderr.contains("new device identity") && shown.stderr.contains("credstore device trust \(dKey)"), "\(shown.stderr)")
        // It is the same user's data: the credential and the trusted devices stayed.
        #expect(try d.run(["get", url, "--user", "alice"] + d.storeArguments).stdout == "first\n")
        let trusted = try d.run(["device", "list", "--json"] + d.storeArguments)
        #expect(try jsonArray(trusted.stdout).count == 3, "B, C and A's key: \(trusted.stdout)")

        // The other machines trust D's new key, as the note says.
        for machine in fleet.machines {
            #expect(try machine.run(["device", "trust", dKey] + machine.storeArguments).status == 0)
        }
        let dSync = try d.run(["sync", fleet.shared.path] + d.storeArguments)
        #expect(dSync.status == 0, "\(dSync.stderr)")

        // A changes the password and syncs; D syncs before B and C do. B, C and D all get it: D
        // writes its own bundle, not over A's.
        try a.add(url, user: "alice", password: "second", ["--persistence", "synchronizable"])
        _ = try fleet.sync(0)
        #expect(try d.run(["sync", fleet.shared.path] + d.storeArguments).status == 0)
        for index in 1..<3 { _ = try fleet.sync(index) }
        #expect(try d.run(["sync", fleet.shared.path] + d.storeArguments).status == 0)
        for index in 1..<3 {
            #expect(try fleet.passwords(index, url, users: ["alice"]) == ["alice": "second"], "machine \(index)")
        }
        #expect(try d.run(["get", url, "--user", "alice"] + d.storeArguments).stdout == "second\n")

        // Four live stores, four ids, four bundle files: none writes another's.
        let ids = try fleet.machines.map { try deviceID($0) } + [deviceID(d)]
        #expect(Set(ids).count == 4)
        #expect(try bundles(fleet) == ids.map { "\($0).csbundle" }.sorted())
        // Syncing again changes nothing and refuses nothing, anywhere.
        for index in 0..<3 { _ = try fleet.sync(index) }
        #expect(try d.run(["sync", fleet.shared.path] + d.storeArguments).status == 0)
        #expect(try deviceID(d) == dID, "the copy keeps its new identity in its own home")
    }

    @Test func aCopyBesideTheOriginalIsRefusedUntilDeviceResetGivesItItsOwnIdentity() throws {
        let fleet = try Fleet()
        try fleet.trustEachOther()
        let (a, url) = (fleet.machines[0], "https://api.example.com")
        try a.add(url, user: "alice", password: "first", ["--persistence", "synchronizable"])
        _ = try fleet.sync(0)
        let aBundle = fleet.shared.appendingPathComponent("\(try deviceID(a)).csbundle")
        let written = try Data(contentsOf: aBundle)

        // A copy made with `cp` in the same home: same machine, same state folder, same identity.
        let copy = a.root.appendingPathComponent("copy/store/credentials.db")
        try copyStore(from: a.store, to: copy)
        let added = try a.run(["add", "https://copy.example.com", "--user", "bob", "--persistence", "synchronizable", "--store", copy.path], stdin: "only-in-the-copy\n")
        #expect(added.status == 0, "\(added.stderr)")
        let refused = try a.run(["sync", fleet.shared.path, "--store", copy.path])
        #expect(refused.status == 65, "\(refused.stderr)")
        #expect(refused.stderrIsOneErrorLine, "\(refused.stderr)")
        #expect(refused.stderr.contains(aBundle.path) && refused.stderr.contains("`credstore device reset --store \(copy.path)`"), "\(refused.stderr)")
        #expect(try Data(contentsOf: aBundle) == written, "the original's bundle was overwritten")

        // The advised command works: the copy gets its own identity, syncs, and its change travels.
        let reset = try a.run(["device", "reset", "--json", "--store", copy.path])
        #expect(reset.status == 0, "\(reset.stderr)")
        let copyID = try #require(try jsonObject(reset.stdout)["deviceId"] as? String)
        let copyKey = try #require(try jsonObject(reset.stdout)["publicKey"] as? String)
        #expect(copyID != aBundle.deletingPathExtension().lastPathComponent)
        let again = try a.run(["sync", fleet.shared.path, "--json", "--store", copy.path])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try jsonObject(again.stdout)["wrote"] as? String == "\(copyID).csbundle")
        #expect(try Data(contentsOf: aBundle) == written)
        let b = fleet.machines[1]
        #expect(try b.run(["device", "trust", copyKey] + b.storeArguments).status == 0)
        _ = try fleet.sync(1)
        #expect(try b.run(["get", "https://copy.example.com", "--user", "bob"] + b.storeArguments).stdout == "only-in-the-copy\n")
    }

    @Test func aBackupRestoredWhereItWasMadeKeepsItsIdentityAndElsewhereTakesItsOwn() throws {
        let a = try Sandbox()
        try a.add("https://api.example.com", user: "alice", password: "pw", ["--persistence", "synchronizable"])
        let aID = try deviceID(a)
        let backup = a.root.appendingPathComponent("store.backup")
        let passphrase = ["CREDSTORE_BACKUP_PASSPHRASE": "backup passphrase"]
        #expect(try a.run(["backup", backup.path] + a.storeArguments, environment: passphrase).status == 0)

        let inPlace = try a.run(["restore", backup.path, "--yes"] + a.storeArguments, environment: passphrase)
        #expect(inPlace.status == 0, "\(inPlace.stderr)")
        let shown = try a.run(["device", "show", "--json"] + a.storeArguments)
        #expect(try jsonObject(shown.stdout)["deviceId"] as? String == aID)
        #expect(shown.stderr.isEmpty, "\(shown.stderr)")

        let d = try Sandbox()
        let elsewhere = try d.run(["restore", backup.path, "--yes"] + d.storeArguments, environment: passphrase)
        #expect(elsewhere.status == 0, "\(elsewhere.stderr)")
        let renewed = try d.run(["device", "show", "--json"] + d.storeArguments)
        #expect(renewed.status == 0, "\(renewed.stderr)")
        #expect(try jsonObject(renewed.stdout)["deviceId"] as? String != aID)
        #expect(renewed.stderr.contains("new device identity"), "\(renewed.stderr)")
        #expect(try d.run(["get", "https://api.example.com", "--user", "alice"] + d.storeArguments).stdout == "pw\n")
    }

    @Test func anOlderBundleOfThisStorePutBackInTheFolderIsReplaced() throws {
        let fleet = try Fleet()
        let (a, url) = (fleet.machines[0], "https://api.example.com")
        try a.add(url, user: "alice", password: "first", ["--persistence", "synchronizable"])
        _ = try fleet.sync(0)
        let bundle = fleet.shared.appendingPathComponent("\(try deviceID(a)).csbundle")
        let older = try Data(contentsOf: bundle)
        try a.add(url, user: "alice", password: "second", ["--persistence", "synchronizable"])
        _ = try fleet.sync(0)
        // The folder's transport (a git checkout, a file-sync conflict) brings the older one back.
        try older.write(to: bundle)
        let result = try fleet.sync(0)
        #expect(try jsonObject(result.stdout)["changed"] as? Bool == true)
        #expect(try Data(contentsOf: bundle) != older)
    }

    /// A syncs into two folders; the user copies A's newest bundle from one into the other by
    /// hand. It is A's own bundle, newer than the one A recorded there: `sync` replaces it rather
    /// than calling it another store's.
    /// A store moved away, and a new store made at its old path: the moved store's bundle is its
    /// own, not a copy's, and it syncs; the new store has an identity of its own.
    @Test func aMovedStoreSyncsWhenANewStoreIsMadeWhereItWas() throws {
        let fleet = try Fleet()
        try fleet.trustEachOther()
        let (a, url) = (fleet.machines[0], "https://api.example.com")
        try a.add(url, user: "alice", password: "first", ["--persistence", "synchronizable"])
        _ = try fleet.sync(0)
        let movedFolder = a.root.appendingPathComponent("moved", isDirectory: true)
        try FileManager.default.moveItem(at: a.store.deletingLastPathComponent(), to: movedFolder)
        let moved = movedFolder.appendingPathComponent(a.store.lastPathComponent)
        let created = try a.run(["add", "https://new.example.com", "--user", "nina", "--persistence", "synchronizable"] + a.storeArguments, stdin: "in-the-new-store\n")
        #expect(created.status == 0, "\(created.stderr)")
        #expect(try deviceID(a) != (try deviceID(a, moved)))

        let changed = try a.run(["add", url, "--user", "alice", "--persistence", "synchronizable", "--store", moved.path], stdin: "second\n")
        #expect(changed.status == 0, "\(changed.stderr)")
        let synced = try a.run(["sync", fleet.shared.path, "--store", moved.path])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(!synced.stderr.contains("not by this store"), "\(synced.stderr)")
        _ = try fleet.sync(1)
        let b = fleet.machines[1]
        #expect(try b.run(["get", url, "--user", "alice"] + b.storeArguments).stdout == "second\n")
    }

    @Test func thisStoresBundleCopiedFromAnotherFolderIsReplaced() throws {
        let fleet = try Fleet()
        let (a, url) = (fleet.machines[0], "https://api.example.com")
        let other = a.root.appendingPathComponent("other-folder", isDirectory: true)
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try a.add(url, user: "alice", password: "first", ["--persistence", "synchronizable"])
        #expect(try a.run(["sync", other.path] + a.storeArguments).status == 0)
        try a.add(url, user: "alice", password: "second", ["--persistence", "synchronizable"])
        _ = try fleet.sync(0)
        let name = "\(try deviceID(a)).csbundle"
        try FileManager.default.removeItem(at: other.appendingPathComponent(name))
        try FileManager.default.copyItem(at: fleet.shared.appendingPathComponent(name), to: other.appendingPathComponent(name))

        let synced = try a.run(["sync", other.path] + a.storeArguments)
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(!synced.stderr.contains("not by this store"), "\(synced.stderr)")
    }
}
