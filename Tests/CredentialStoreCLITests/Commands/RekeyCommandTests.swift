import Foundation
import Testing

/// `credstore rekey`.
struct RekeyCommandTests {
    @Test func rekeyKeepsEveryCredentialAndTheKeyFile() throws {
        let sandbox = try Sandbox()
        for index in 0..<5 {
            try sandbox.add("https://host\(index).example.com", user: "user\(index)", password: "pw-\(index)")
        }
        try sandbox.add("https://host0.example.com", user: "other", password: "pw-other", ["--default"])
        let keyFile = sandbox.store.deletingLastPathComponent().appendingPathComponent("store.key")
        let keyBefore = try Data(contentsOf: keyFile)
        let rowsBefore = try sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout

        let rekeyed = try sandbox.run(["rekey"] + sandbox.storeArguments)
        #expect(rekeyed.status == 0)
        #expect(rekeyed.stderr.isEmpty)

        #expect(try Data(contentsOf: keyFile) == keyBefore)
        #expect(try sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout == rowsBefore)
        for index in 1..<5 {
            #expect(try sandbox.run(["get", "https://host\(index).example.com"] + sandbox.storeArguments).stdout == "pw-\(index)\n")
        }
        #expect(try sandbox.run(["get", "https://host0.example.com"] + sandbox.storeArguments).stdout == "pw-other\n")
        #expect(try sandbox.run(["verify"] + sandbox.storeArguments).status == 0)
    }

    @Test func rekeyOfNoStoreExits1() throws {
        let sandbox = try Sandbox()
        let result = try sandbox.run(["rekey"] + sandbox.storeArguments)
        #expect(result.status == 1)
        #expect(result.stderrIsOneErrorLine)
    }
}
