import Foundation
import Testing
@testable import CredentialStore

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
        let recipient = try DeviceIdentity.publicKey(fromText: try #require(Self.recipient))
        let megabytes = Int(ProcessInfo.processInfo.environment["CREDSTORE_LARGE_BUNDLE_MIB"] ?? "480") ?? 480
        // A signer the store under measurement does not trust, whose key is written beside the
        // bundle so the same bundle can also be measured once trusted.
        let sender = try SyncPeer()
        let device = try sender.storage.deviceIdentity()
        let password = String(repeating: "p", count: 4000)
        let now = SystemClock().now()
        let count = megabytes << 20 / 4100
        let items = (0..<count).map { index in
            BundleItem(
                space: ProtectionSpace(host: "host\(index % 5000).example.com", port: 443, protocol: "https", realm: nil, authenticationMethod: nil),
                user: "user\(index)", stamp: HybridTimestamp(wall: now, counter: Int64(index), device: device.deviceID), password: password + "\(index)")
        }
        let contents = BundleContents(senderDevice: device.deviceID, signer: device.publicKey, created: now, items: items, defaults: [])
        let bytes = try BundleFormat.write(contents, protection: .recipients([recipient]), signer: device)
        try Data(bytes).write(to: folder.appendingPathComponent("large-\(megabytes)MiB.csbundle"))
        try Data((try sender.publicKey + "\n").utf8).write(to: folder.appendingPathComponent("large-\(megabytes)MiB.signer"))
    }
}
