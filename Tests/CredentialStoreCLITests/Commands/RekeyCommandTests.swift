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

    @Test func aRekeyOfAnEmptyStoreLeavesItUsable() throws {
        // An empty store's seal did not move on with the rekey, and every later command took the
        // store for a rolled-back copy (exit 77): found by an outsider's attack.
        for passphrase in [false, true] {
            let sandbox = try Sandbox()
            let environment = passphrase ? ["CREDSTORE_PASSPHRASE": "correct horse"] : [:]
            #expect(try sandbox.run(["init"] + (passphrase ? ["--passphrase"] : []) + sandbox.storeArguments, environment: environment).status == 0)
            #expect(try sandbox.run(["rekey"] + sandbox.storeArguments, environment: environment).status == 0)
            let listed = try sandbox.run(["list", "--json"] + sandbox.storeArguments, environment: environment)
            #expect(listed.status == 0, "\(listed.stderr)")
            #expect(try sandbox.run(["rekey"] + sandbox.storeArguments, environment: environment).status == 0)
            #expect(try sandbox.run(["add", "https://a.example.com", "--user", "u"] + sandbox.storeArguments, stdin: "pw\n", environment: environment).status == 0)
            #expect(try sandbox.run(["get", "https://a.example.com"] + sandbox.storeArguments, environment: environment).stdout == "pw\n")
            #expect(try sandbox.run(["verify"] + sandbox.storeArguments, environment: environment).status == 0)
        }
    }

    @Test func rekeyOfNoStoreExits1() throws {
        let sandbox = try Sandbox()
        let result = try sandbox.run(["rekey"] + sandbox.storeArguments)
        #expect(result.status == 1)
        #expect(result.stderrIsOneErrorLine)
    }
}
