import CredentialStoreTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// docs/cli.md ("Files and environment"): the first commands run at once on a machine create one
/// store between them, whole, and each of them uses it; a store that lost its database says how
/// to start again.
struct FirstUseRaceCommandTests {
    @Test func eightAddsStartedTogetherOnAMissingDefaultStoreAllSucceedRoundAfterRound() throws {
        var failures: [String] = []
        for round in 0..<10 {
            // A sandbox of its own each round: its XDG_DATA_HOME holds no store yet.
            let sandbox = try Sandbox()
            let adds = try (0..<8).map { index in
                try ChildProcess(Sandbox.binary, ["add", "https://host\(index).example.com", "--user", "user\(index)"],
                                 stdin: "pw-\(round)-\(index)\n", environment: sandbox.environment)
            }
            for (index, add) in adds.enumerated() {
                let result = add.wait(timeout: .seconds(120))
                if result.status != 0 || result.killedBySignal {
                    failures.append("round \(round), add \(index): exit \(result.status): \(result.stderr)")
                }
            }
            let listed = try sandbox.run(["list", "--json"])
            #expect(listed.status == 0, "round \(round): \(listed.stderr)")
            let users = try jsonArray(listed.stdout).compactMap { $0["user"] as? String }
            #expect(users.sorted() == (0..<8).map { "user\($0)" }, "round \(round)")
            let verified = try sandbox.run(["verify"])
            #expect(verified.status == 0, "round \(round): \(verified.stdout)\(verified.stderr)")
            #expect(try sandbox.run(["get", "https://host5.example.com"]).stdout == "pw-\(round)-5\n")
            let folder = sandbox.defaultStore.deletingLastPathComponent().path
            let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
            #expect(files.sorted() == ["credentials.db", "store.key"], "round \(round) left \(files)")
        }
        #expect(failures.isEmpty, "\(failures.count) of 80 adds failed; the first: \(failures.prefix(3))")
    }

    @Test func anEmptyStoreFileIsRefusedWithAdviceThatStartsANewStore() throws {
        let sandbox = try Sandbox()
        let folder = sandbox.store.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        #expect(FileManager.default.createFile(atPath: sandbox.store.path, contents: nil, attributes: [.posixPermissions: 0o600]))

        let added = try sandbox.run(["add", "https://api.example.com", "--user", "alice"] + sandbox.storeArguments, stdin: "pw-alice\n")
        #expect(added.status == 74)
        #expect(added.stderrIsOneErrorLine)
        #expect(added.stderr.contains("is empty"))
        #expect(added.stderr.contains("`rm` that empty file and run `credstore init`"))
        #expect(!added.stderr.contains("pw-alice"))

        // The advice works.
        #expect(unlink(sandbox.store.path) == 0)
        #expect(try sandbox.run(["init"] + sandbox.storeArguments).status == 0)
        try sandbox.add("https://api.example.com", user: "alice", password: "pw-alice")
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).stdout == "pw-alice\n")
    }
}
