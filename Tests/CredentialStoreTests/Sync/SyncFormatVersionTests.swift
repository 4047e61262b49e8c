import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// Bundles across format versions: what a store of this version reads from an older credstore.
@Suite(.cheapKeyDerivation) struct SyncFormatVersionTests {
    @Test func aVersionOneBundleWrittenByTheOldCodeStillImports() throws {
        // The store's clock just after the fixture was written: the 180-day window would refuse it later.
        let peer = try SyncPeer(clock: TestClock(startingAt: VersionOneBundle.writtenAround + 60_000))
        let url = peer.file("v1.csbundle")
        try Data(VersionOneBundle.bytes).write(to: url)
        #expect(VersionOneBundle.bytes[8] == 1, "the fixture is of format version 1")

        let report = try peer.storage.sync.importBundle(from: url, passphrase: VersionOneBundle.passphrase)
        #expect(report == ImportReport(added: 3, updated: 0, removed: 0, unchanged: 1))
        let api = ProtectionSpace(host: "api.example.com", port: 443, protocol: "https", realm: "API")
        let git = ProtectionSpace(host: "git.example.org", port: 443, protocol: "https", realm: nil)
        #expect(try peer.storage.credentials(for: api) == ["alice": sync("alice", "v1-alice-password")])
        #expect(try peer.storage.credentials(for: git) == [
            "carol": sync("carol", "v1-carol-password"), "dave": sync("dave", "v1-dave-password"),
        ])
        #expect(try peer.storage.defaultCredential(for: api)?.user == "alice")
        #expect(try peer.storage.defaultCredential(for: git)?.user == "dave")
        #expect(try syncRegister(peer.storage, api, "bob")?.deleted == true, "the tombstone arrived")
        #expect(try peer.storage.sync.importBundle(from: url, passphrase: VersionOneBundle.passphrase) == ImportReport(unchanged: 4))
    }
}
