import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// The basic trip of a synchronizable credential between two stores.
@Suite(.cheapKeyDerivation) struct SyncRoundTripTests {
    let laptop: TemporaryStore
    let desktop: TemporaryStore
    let space = Fixture.space(realm: "API")

    init() throws {
        laptop = try TemporaryStore()
        desktop = try TemporaryStore()
    }

    private func bundleURL(_ store: TemporaryStore, _ name: String = "out.csbundle") -> URL {
        store.directory.deletingLastPathComponent().appendingPathComponent(name)
    }

    @Test func aSynchronizableCredentialTravelsToATrustingRecipient() throws {
        let a = try laptop.open()
        let b = try desktop.open()
        try a.set(Fixture.credential("alice", "synced", .synchronizable), for: space)
        try a.set(Fixture.credential("bob", "local-only", .permanent), for: space)
        try a.set(Fixture.credential("carol", "session-only", .forSession), for: space)
        try b.sync.trust(try a.sync.deviceKey)

        let bundle = bundleURL(laptop)
        try a.sync.export(to: bundle, protection: .recipients([try b.sync.deviceKey]))
        let bytes = try Data(contentsOf: bundle)
        for secret in ["synced", "local-only", "session-only", "alice", "api.example.com"] {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) in the bundle")
        }
        let report = try b.sync.importBundle(from: bundle)
        #expect(report == ImportReport(added: 1, updated: 0, removed: 0, unchanged: 0))
        #expect(try b.credentials(for: space) == ["alice": Fixture.credential("alice", "synced", .synchronizable)])
        #expect(try b.sync.importBundle(from: bundle) == ImportReport(unchanged: 1), "idempotent")
    }

    @Test func deletionsDefaultsAndPassphraseBundlesTravelToo() throws {
        let a = try laptop.open()
        let b = try desktop.open()
        try a.set(Fixture.credential("alice", "a", .synchronizable), for: space)
        try a.set(Fixture.credential("bob", "b", .synchronizable), for: space)
        try a.setDefaultCredential(Fixture.credential("bob", "b", .synchronizable), for: space)
        let bundle = bundleURL(laptop)
        try a.sync.export(to: bundle, protection: .passphrase("bundle pass"))
        #expect(try b.sync.importBundle(from: bundle, passphrase: "bundle pass").added == 2)
        #expect(try b.defaultCredential(for: space)?.user == "bob")

        try a.remove(user: "bob", for: space, options: .removeSynchronizable)
        try a.sync.export(to: bundle, protection: .passphrase("bundle pass"))
        let dry = try b.sync.importBundle(from: bundle, passphrase: "bundle pass", dryRun: true)
        #expect(dry == ImportReport(added: 0, updated: 0, removed: 1, unchanged: 1))
        #expect(try b.credentials(for: space).count == 2, "a dry run changes nothing")
        #expect(try b.sync.importBundle(from: bundle, passphrase: "bundle pass") == dry)
        #expect(try b.credentials(for: space).keys.sorted() == ["alice"])
        expectError(.wrongKey) { try b.sync.importBundle(from: bundle, passphrase: "wrong") }
    }
}
