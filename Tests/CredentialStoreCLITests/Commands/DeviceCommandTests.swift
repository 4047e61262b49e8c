import Foundation
import Testing

/// `credstore device show` and `credstore device trust`.
struct DeviceCommandTests {
    @Test func deviceShowPrintsTheIdAndKeyForPeopleAsJSONDoes() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.run(["init"] + sandbox.storeArguments).status == 0)
        let shown = try sandbox.run(["device", "show"] + sandbox.storeArguments)
        #expect(shown.status == 0, "device show failed: \(shown.stderr)")
        #expect(shown.stderr.isEmpty)
        let json = try jsonObject(try sandbox.run(["device", "show", "--json"] + sandbox.storeArguments).stdout)
        let id = try #require(json["deviceId"] as? String)
        let key = try #require(json["publicKey"] as? String)
        #expect(key.hasPrefix("csdev1:"))
        // The plain form is two aligned lines, the same identity as the JSON's.
        #expect(shown.stdout == "device id:  \(id)\npublic key: \(key)\n")
        // The identity belongs to the store: a second run shows the same.
        #expect(try sandbox.run(["device", "show"] + sandbox.storeArguments).stdout == shown.stdout)
    }

    /// A mistyped --store made `device show` create a store and print its key;
    /// `export` and `netrc export`, which only read too, created one and wrote an empty file (over
    /// an existing netrc).
    @Test func commandsThatOnlyReadCreateNoStoreAndSaySo() throws {
        let sandbox = try Sandbox()
        let typo = sandbox.root.appendingPathComponent("stroe/credentials.db")
        let netrc = sandbox.root.appendingPathComponent("curl.netrc")
        try "machine a.example.com login alice password kept\n".write(to: netrc, atomically: true, encoding: .utf8)
        let bundle = sandbox.root.appendingPathComponent("out.csbundle")
        for arguments in [
            ["device", "show", "--store", typo.path], ["device", "show", "--json", "--store", typo.path], ["device", "show"],
            ["netrc", "export", netrc.path, "--store", typo.path], ["export", bundle.path, "--store", typo.path],
        ] {
            let result = try sandbox.run(arguments, environment: ["CREDSTORE_BUNDLE_PASSPHRASE": "bundle-pass"])
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(arguments): nothing is printed: \(result.stdout)")
            #expect(result.stderrIsOneErrorLine, "\(result.stderr)")
            #expect(result.stderr.contains("no store at"), "\(result.stderr)")
        }
        #expect(try sandbox.run(["device", "show", "--store", typo.path]).stderr.contains("credstore init"))
        // Nothing was made or replaced: neither the mistyped store, nor its folder, nor the default
        // store, nor a bundle; the netrc file is as it was.
        #expect(!FileManager.default.fileExists(atPath: typo.deletingLastPathComponent().path))
        #expect(!FileManager.default.fileExists(atPath: sandbox.defaultStore.deletingLastPathComponent().path))
        #expect(!FileManager.default.fileExists(atPath: bundle.path))
        #expect(try String(contentsOf: netrc, encoding: .utf8) == "machine a.example.com login alice password kept\n")
    }

    @Test(arguments: [
        "not-a-key",                        // no csdev1: prefix
        "csdev1:",                          // nothing after it
        "csdev1:AAAA",                      // too short for a public key
        "csdev1:!!!!not*base64!!!!",        // not base64url at all
        "csdev1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",  // the right length, all zeros: no store has it
    ])
    func deviceTrustOfAMalformedKeyExits65InOneLine(_ key: String) throws {
        let sandbox = try Sandbox()
        let other = try Sandbox()
        // Another store's real key, to show afterwards that the refusal left this store usable.
        #expect(try other.run(["init"] + other.storeArguments).status == 0)
        let otherKey = try #require(try jsonObject(other.run(["device", "show", "--json"] + other.storeArguments).stdout)["publicKey"] as? String)
        // The store exists before the bad trust, so what is refused is the key, not a missing store.
        #expect(try sandbox.run(["init"] + sandbox.storeArguments).status == 0)

        let refused = try sandbox.run(["device", "trust", key] + sandbox.storeArguments)
        #expect(refused.status == 65, "\(refused.stderr)")
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderrIsOneErrorLine, "\(refused.stderr)")
        #expect(refused.stderr.contains("credstore device show"), "the message says where a good key comes from")

        // The store is still usable, and a well-formed key is accepted.
        let trusted = try sandbox.run(["device", "trust", otherKey] + sandbox.storeArguments)
        #expect(trusted.status == 0 && trusted.stdout == "Trusted \(otherKey)\n", "\(trusted.stderr)")

        // Where there is no store yet, a refused key leaves none behind.
        let fresh = try Sandbox()
        let refusedFresh = try fresh.run(["device", "trust", key] + fresh.storeArguments)
        #expect(refusedFresh.status == 65, "\(refusedFresh.stderr)")
        #expect(!FileManager.default.fileExists(atPath: fresh.store.path), "no store was created for a refused key")
    }

    @Test func exportToAMistypedRecipientExits65BeforeAnyStoreIsCreated() throws {
        let fresh = try Sandbox()
        let bundle = fresh.root.appendingPathComponent("out.csbundle")
        let refused = try fresh.run(["export", bundle.path, "--recipient", "csdev1:nonsense"] + fresh.storeArguments)
        #expect(refused.status == 65, "\(refused.stderr)")
        #expect(refused.stderrIsOneErrorLine, "\(refused.stderr)")
        #expect(refused.stderr.contains("device key"), "the library's fact: \(refused.stderr)")
        #expect(refused.stderr.contains("credstore device show"), "the CLI's advice: \(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: fresh.store.path), "no store was created for a refused key")
        #expect(!FileManager.default.fileExists(atPath: bundle.path))
    }
}
