import Foundation
import Testing

/// `credstore verify`.
struct VerifyCommandTests {
    @Test func aSoundStoreVerifies() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://a.example.com", user: "alice", password: "pw-a")
        try sandbox.add("https://b.example.com", user: "bob", password: "pw-b")

        let verified = try sandbox.run(["verify"] + sandbox.storeArguments)
        #expect(verified.status == 0)
        #expect(verified.stderr.isEmpty)
        #expect(verified.stdout.contains("2 credentials and 2 defaults"))

        let report = try jsonObject(sandbox.run(["verify", "--json"] + sandbox.storeArguments).stdout)
        #expect(report["sound"] as? Bool == true)
        #expect(report["credentialsChecked"] as? Int == 2)
        #expect(report["defaultsChecked"] as? Int == 2)
        #expect((report["problems"] as? [Any])?.isEmpty == true)
    }

    @Test func aTamperedRowFailsVerifyWith77() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://a.example.com", user: "alice", password: "pw-a")
        try sandbox.add("https://b.example.com", user: "bob", password: "pw-b")
        try sandbox.sqlite("UPDATE credentials SET sealed_credential = zeroblob(length(sealed_credential)) WHERE space_index = (SELECT min(space_index) FROM credentials)")

        let verified = try sandbox.run(["verify", "--json"] + sandbox.storeArguments)
        #expect(verified.status == 77)
        #expect(verified.stderrIsOneErrorLine)
        let report = try jsonObject(verified.stdout)
        #expect(report["sound"] as? Bool == false)
        // The row fails its own authentication, and the set of rows no longer matches the seal.
        let problems = report["problems"] as? [String] ?? []
        #expect(problems.count == 2)
        #expect(problems.contains { $0.contains("fails authentication") })
        #expect(problems.contains { $0.contains("seal") })
        #expect(!verified.stdout.contains("pw-"))
    }

    @Test func verifyOfNoStoreExits1() throws {
        let sandbox = try Sandbox()
        let result = try sandbox.run(["verify"] + sandbox.storeArguments)
        #expect(result.status == 1)
        #expect(!FileManager.default.fileExists(atPath: sandbox.store.path))
    }
}
