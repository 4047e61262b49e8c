import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Every message that advises a command, for a store that fails its checks, names one that works
/// there: each test puts a store in the situation, reads the advice, and runs what it names.
struct StoreAdviceCommandTests {
    let passphrase = ["CREDSTORE_BACKUP_PASSPHRASE": "backup passphrase"]

    /// The store's database and WAL as they are now, with the store closed.
    func copyOfStore(_ sandbox: Sandbox) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: sandbox.store.path + suffix) {
            files[suffix] = try Data(contentsOf: URL(fileURLWithPath: sandbox.store.path + suffix))
        }
        return files
    }

    /// Puts `copy` back in place of the store, as restic or rsync would restore a folder.
    func putBack(_ copy: [String: Data], into sandbox: Sandbox) throws {
        for suffix in ["", "-wal", "-shm"] { unlink(sandbox.store.path + suffix) }
        for (suffix, data) in copy {
            let url = URL(fileURLWithPath: sandbox.store.path + suffix)
            #expect(FileManager.default.createFile(atPath: url.path, contents: data, attributes: [.posixPermissions: 0o600]))
        }
    }

    func backUp(_ sandbox: Sandbox) throws -> URL {
        let file = sandbox.root.appendingPathComponent("store.backup")
        let result = try sandbox.run(["backup", file.path] + sandbox.storeArguments, environment: passphrase)
        #expect(result.status == 0, "backup failed: \(result.stderr)")
        return file
    }

    func get(_ sandbox: Sandbox, user: String) throws -> RunResult {
        try sandbox.run(["get", "https://api.example.com", "--user", user] + sandbox.storeArguments)
    }

    /// `restore FILE` as the advice names it, with --yes since no terminal is there to confirm.
    func restore(_ file: URL, _ sandbox: Sandbox) throws -> RunResult {
        try sandbox.run(["restore", file.path, "--yes"] + sandbox.storeArguments, environment: passphrase)
    }

    @Test func aStoreRolledBackByHandIsAcceptedByInitForceAsTheAdviceSays() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-alice")
        let copy = try copyOfStore(sandbox)
        try sandbox.add("https://api.example.com", user: "bob", password: "pw-bob")
        try putBack(copy, into: sandbox)

        let refused = try get(sandbox, user: "alice")
        #expect(refused.status == 77)
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderrIsOneErrorLine, "\(refused.stderr)")
        #expect(refused.stderr.contains("rolled back"))
        #expect(!refused.stderr.contains("CredentialStorage."), "the library's API is no advice on a command line: \(refused.stderr)")
        #expect(refused.stderr.contains("`credstore init --force` accepts it"), "\(refused.stderr)")
        #expect(refused.stderr.contains("`credstore restore FILE`"), "\(refused.stderr)")

        let accepted = try sandbox.run(["init", "--force"] + sandbox.storeArguments)
        #expect(accepted.status == 0, "init --force did not accept the older copy: \(accepted.stderr)")
        let alice = try get(sandbox, user: "alice")
        #expect(alice.status == 0, "\(alice.stderr)")
        #expect(alice.stdout == "pw-alice\n")
        #expect(try get(sandbox, user: "bob").status == 1)
        // From there the anchor follows it: the copy is this path's store, and verifies clean.
        try sandbox.add("https://api.example.com", user: "carol", password: "pw-carol")
        #expect(try sandbox.run(["verify"] + sandbox.storeArguments).status == 0)
    }

    @Test func aPassphraseStoreRolledBackByHandIsAcceptedByTheAdvisedCommandAsItIs() throws {
        let sandbox = try Sandbox()
        let unlock = ["CREDSTORE_PASSPHRASE": "correct horse battery staple"]
        #expect(try sandbox.run(["init", "--passphrase"] + sandbox.storeArguments, environment: unlock).status == 0)
        #expect(try sandbox.run(["add", "https://api.example.com", "--user", "alice"] + sandbox.storeArguments, stdin: "pw-alice\n", environment: unlock).status == 0)
        let copy = try copyOfStore(sandbox)
        #expect(try sandbox.run(["add", "https://api.example.com", "--user", "bob"] + sandbox.storeArguments, stdin: "pw-bob\n", environment: unlock).status == 0)
        try putBack(copy, into: sandbox)

        let refused = try sandbox.run(["get", "https://api.example.com", "--user", "alice"] + sandbox.storeArguments, environment: unlock)
        #expect(refused.status == 77 && refused.stderr.contains("`credstore init --force` accepts it"), "\(refused.stderr)")
        // The command the advice names, as it names it: no --passphrase to guess.
        let accepted = try sandbox.run(["init", "--force"] + sandbox.storeArguments, environment: unlock)
        #expect(accepted.status == 0, "\(accepted.stderr)")
        let alice = try sandbox.run(["get", "https://api.example.com", "--user", "alice"] + sandbox.storeArguments, environment: unlock)
        #expect(alice.status == 0 && alice.stdout == "pw-alice\n", "\(alice.stderr)")
    }

    @Test func aStoreRolledBackByHandIsUndoneByRestoreAsTheAdviceSays() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-alice")
        let copy = try copyOfStore(sandbox)
        try sandbox.add("https://api.example.com", user: "bob", password: "pw-bob")
        let file = try backUp(sandbox)
        try putBack(copy, into: sandbox)
        #expect(try get(sandbox, user: "bob").status == 77)

        let restored = try restore(file, sandbox)
        #expect(restored.status == 0, "\(restored.stderr)")
        // The rolled-back store is compared with the backup all the same.
        #expect(restored.stdout.contains("1 removed since came back"), "\(restored.stdout)")
        #expect(try get(sandbox, user: "bob").stdout == "pw-bob\n")
    }

    @Test func anotherStorePutInPlaceIsAcceptedByInitForceOrReplacedByRestore() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-alice")
        let file = try backUp(sandbox)
        let other = try Sandbox()
        try other.add("https://api.example.com", user: "mallory", password: "pw-mallory")
        for suffix in ["", "-wal", "-shm"] { unlink(sandbox.store.path + suffix) }
        let keyFile = sandbox.store.deletingLastPathComponent().appendingPathComponent("store.key")
        unlink(keyFile.path)
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: other.store.path + suffix) {
            try FileManager.default.moveItem(atPath: other.store.path + suffix, toPath: sandbox.store.path + suffix)
        }
        try FileManager.default.moveItem(at: other.store.deletingLastPathComponent().appendingPathComponent("store.key"), to: keyFile)

        let refused = try get(sandbox, user: "mallory")
        #expect(refused.status == 77)
        #expect(refused.stderrIsOneErrorLine, "\(refused.stderr)")
        #expect(refused.stderr.contains("`credstore init --force` accepts it"), "\(refused.stderr)")
        #expect(refused.stderr.contains("`credstore restore FILE`"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("CredentialStorage."), "the library's API is no advice on a command line: \(refused.stderr)")
        // verify opens the store as every command does, and refuses it too: it is not advised.
        #expect(!refused.stderr.contains("credstore verify"), "\(refused.stderr)")
        #expect(try sandbox.run(["verify"] + sandbox.storeArguments).status == 77)

        // Putting one's own back: restore, even over the stranger's key file's store.
        let restored = try restore(file, sandbox)
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try get(sandbox, user: "alice").stdout == "pw-alice\n")
    }

    @Test func anAlteredRowIsReportedByVerifyAndUndoneByRestoreAsTheAdviceSays() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-alice")
        let file = try backUp(sandbox)
        try sandbox.sqlite("UPDATE credentials SET sealed_credential = zeroblob(length(sealed_credential))")

        let refused = try get(sandbox, user: "alice")
        #expect(refused.status == 77)
        #expect(refused.stderrIsOneErrorLine, "\(refused.stderr)")
        #expect(refused.stderr.contains("`credstore verify`"), "\(refused.stderr)")
        #expect(refused.stderr.contains("`credstore restore FILE`"), "\(refused.stderr)")
        // An altered row stays altered when accepted: init --force is not advised for it.
        #expect(!refused.stderr.contains("init --force"), "\(refused.stderr)")

        let verified = try sandbox.run(["verify"] + sandbox.storeArguments)
        #expect(verified.status == 77)
        #expect(verified.stdout.contains("problem: credential row 1 fails authentication"), "\(verified.stdout)")
        // verify's own failure does not send the user to verify again.
        #expect(verified.stderr.contains("`credstore restore FILE`"), "\(verified.stderr)")
        #expect(!verified.stderr.contains("credstore verify"), "\(verified.stderr)")

        #expect(try restore(file, sandbox).status == 0)
        #expect(try get(sandbox, user: "alice").stdout == "pw-alice\n")
    }

    @Test(arguments: ["schema", "damage"])
    func aStoreThatNoCommandOpensIsUndoneByRestoreAsTheAdviceSays(fault: String) throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-alice")
        let file = try backUp(sandbox)
        if fault == "schema" {
            try sandbox.sqlite("CREATE VIEW peek AS SELECT * FROM credentials")
        } else {
            for suffix in ["-wal", "-shm"] { unlink(sandbox.store.path + suffix) }
            let handle = try FileHandle(forWritingTo: sandbox.store)
            try handle.write(contentsOf: Data(repeating: 0x5A, count: 100))
            try handle.close()
        }

        let refused = try get(sandbox, user: "alice")
        #expect(refused.status == (fault == "schema" ? 77 : 74))
        #expect(refused.stderrIsOneErrorLine, "\(refused.stderr)")
        #expect(refused.stderr.contains("`credstore restore FILE`"), "\(refused.stderr)")
        // verify refuses such a store as every command does: it is not advised.
        #expect(!refused.stderr.contains("credstore verify"), "\(refused.stderr)")
        #expect(try sandbox.run(["verify"] + sandbox.storeArguments).status == refused.status)
        #expect(refused.stderr.components(separatedBy: "from a backup").count == 2, "the remedy said once: \(refused.stderr)")

        let restored = try restore(file, sandbox)
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try get(sandbox, user: "alice").stdout == "pw-alice\n")
        #expect(try sandbox.run(["verify"] + sandbox.storeArguments).status == 0)
    }
}
