import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Store ownership through the CLI: files of another user, and a store swapped for another.
struct StoreReplacementCommandTests {
    /// Moves another sandbox's store (database and key file) into `sandbox`'s place. The old
    /// store's WAL and shared-memory files go too: a WAL left beside the new database (a loaded
    /// machine can leave one for a moment after the last write) would be replayed onto it, and the
    /// store would read as the old one under the new key file.
    func replace(_ sandbox: Sandbox, with other: Sandbox) throws {
        for suffix in ["-wal", "-shm"] { _ = unlink(sandbox.store.path + suffix) }
        let keyFile = sandbox.store.deletingLastPathComponent().appendingPathComponent("store.key")
        let otherKey = other.store.deletingLastPathComponent().appendingPathComponent("store.key")
        for (from, to) in [(other.store, sandbox.store), (otherKey, keyFile)] {
            _ = unlink(to.path)
            if FileManager.default.fileExists(atPath: from.path) { try FileManager.default.moveItem(at: from, to: to) }
        }
    }

    @Test func anotherStoreAtTheSamePathExits77UntilInitForceAcceptsIt() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-alice")
        let other = try Sandbox()
        try other.add("https://api.example.com", user: "mallory", password: "pw-mallory")
        try replace(sandbox, with: other)

        let got = try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments)
        #expect(got.status == 77)
        #expect(got.stdout.isEmpty)
        #expect(got.stderrIsOneErrorLine)
        #expect(got.stderr.contains("init --force"))
        // Nothing is written into the stranger's store either.
        #expect(try sandbox.run(["add", "https://api.example.com", "--user", "bob"] + sandbox.storeArguments, stdin: "pw-bob\n").status == 77)

        #expect(try sandbox.run(["init", "--force"] + sandbox.storeArguments).status == 0)
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).stdout == "pw-mallory\n")
    }

    @Test func aCopyBesideTheOriginalKeepsAHistoryOfItsOwn() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-alice")
        // `cp -r` of the store's folder, in the same home: the same store id, another path.
        let copyFolder = sandbox.root.appendingPathComponent("copy")
        try FileManager.default.copyItem(at: sandbox.store.deletingLastPathComponent(), to: copyFolder)
        let copy = ["--store", copyFolder.appendingPathComponent("credentials.db").path]

        // Writes to either leave the other as it was: neither reads as rolled back.
        for round in 1...2 {
            try sandbox.add("https://api.example.com", user: "bob", password: "original \(round)")
            let fromCopy = try sandbox.run(["get", "https://api.example.com", "--user", "alice"] + copy)
            #expect(fromCopy.status == 0 && fromCopy.stdout == "pw-alice\n", "round \(round): \(fromCopy.stderr)")
            #expect(try sandbox.run(["add", "https://api.example.com", "--user", "carol"] + copy, stdin: "copy \(round)\n").status == 0)
            let fromOriginal = try sandbox.run(["get", "https://api.example.com", "--user", "bob"] + sandbox.storeArguments)
            #expect(fromOriginal.status == 0 && fromOriginal.stdout == "original \(round)\n", "round \(round): \(fromOriginal.stderr)")
        }
        #expect(try sandbox.run(["verify"] + copy).status == 0)
        #expect(try sandbox.run(["verify"] + sandbox.storeArguments).status == 0)

        // Each path's history is still guarded: the original rolled back to an older copy of itself is refused.
        let older = sandbox.root.appendingPathComponent("older.db")
        try FileManager.default.copyItem(at: sandbox.store, to: older)
        try sandbox.add("https://api.example.com", user: "dave", password: "later")
        for suffix in ["-wal", "-shm"] { _ = unlink(sandbox.store.path + suffix) }
        _ = unlink(sandbox.store.path)
        try FileManager.default.copyItem(at: older, to: sandbox.store)
        #expect(try sandbox.run(["get", "https://api.example.com", "--user", "alice"] + sandbox.storeArguments).status == 77)
    }

    @Test func aKeyFileStoreWhereAPassphraseStoreWasExits77() throws {
        let sandbox = try Sandbox()
        let passphrase = ["CREDSTORE_PASSPHRASE": "correct horse"]
        #expect(try sandbox.run(["init", "--passphrase"] + sandbox.storeArguments, environment: passphrase).status == 0)
        #expect(try sandbox.run(["add", "https://api.example.com", "--user", "alice"] + sandbox.storeArguments,
                                stdin: "pw-alice\n", environment: passphrase).status == 0)
        let other = try Sandbox()
        try other.add("https://api.example.com", user: "mallory", password: "pw-mallory")
        try replace(sandbox, with: other)

        let got = try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments, environment: passphrase)
        #expect(got.status == 77)
        #expect(got.stdout.isEmpty)
        #expect(got.stderr.contains("passphrase"))
        #expect(try sandbox.run(["add", "https://x.example.com", "--user", "alice"] + sandbox.storeArguments,
                                stdin: "pw\n", environment: passphrase).status == 77)
    }

    @Test(.enabled(if: geteuid() == 0), arguments: ["credentials.db", "store.key", ""])
    func aStoreFileOwnedByAnotherUserExits77NamingTheOwner(name: String) throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-alice")
        let path = sandbox.store.deletingLastPathComponent().appendingPathComponent(name).path
        #expect(chown(path, 65534, 65534) == 0)
        let got = try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments)
        #expect(got.status == 77)
        #expect(got.stdout.isEmpty)
        #expect(got.stderrIsOneErrorLine)
        #expect(got.stderr.contains("uid 65534"))
        #expect(try sandbox.run(["add", "https://api.example.com", "--user", "bob"] + sandbox.storeArguments, stdin: "pw\n").status == 77)
    }
}
