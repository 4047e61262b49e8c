import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// Writes the large bundles that docs/reliability.md's resource-bound figures are measured with;
/// runs only when `CREDSTORE_LARGE_BUNDLE_DIR` names a folder and `CREDSTORE_LARGE_BUNDLE_RECIPIENT`
/// a device key (`credstore device show` of the store under measurement). Not a test of its own:
/// it allocates hundreds of MiB, which the regular suite must not.
@Suite struct LargeBundleFixture {
    static let folder = ProcessInfo.processInfo.environment["CREDSTORE_LARGE_BUNDLE_DIR"]
    static let recipient = ProcessInfo.processInfo.environment["CREDSTORE_LARGE_BUNDLE_RECIPIENT"]

    @Test(.enabled(if: folder != nil && recipient != nil))
    func writeLargeBundles() throws {
        let folder = URL(fileURLWithPath: try #require(Self.folder))
        let recipient = try DeviceKey(try #require(Self.recipient))
        let megabytes = Int(ProcessInfo.processInfo.environment["CREDSTORE_LARGE_BUNDLE_MIB"] ?? "480") ?? 480
        // A signer the store under measurement does not trust, whose key is written beside the
        // bundle so the same bundle can also be measured once trusted.
        let sender = try SyncPeer()
        let password = String(repeating: "p", count: 4000)
        let now = nowMillis()
        let count = megabytes << 20 / 4100
        let items = (0..<count).map { index in
            SignedBundleItem(
                space: ProtectionSpace(host: "host\(index % 5000).example.com", port: 443, protocol: "https", realm: nil, authenticationMethod: nil),
                user: "user\(index)", password: password + "\(index)", wall: now, counter: Int64(index))
        }
        try sender.storage.writeBundle(items, created: now, for: [recipient], to: folder.appendingPathComponent("large-\(megabytes)MiB.csbundle"))
        try Data((sender.publicKey.description + "\n").utf8).write(to: folder.appendingPathComponent("large-\(megabytes)MiB.signer"))
    }
}
