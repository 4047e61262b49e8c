import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStoreTestSupport

/// One range for every expiry credstore keeps, 1970 through 9999 (docs/contract.md): checked where
/// a value enters, so that no conversion, listing or comparison of it can trap.
@Suite struct ExpiryRangeTests {
    static let space = ProtectionSpace(host: "git.example.com", port: 443, protocol: "https", realm: nil)

    /// The edges, the extremes of the type, and a spread of seeded values between them.
    static let candidates: [Int64] = {
        var values: [Int64] = [.min, .min + 1, -1_000_000_000_000, -1, 0, 1, 253_402_300_799, 253_402_300_800, 9_223_372_036_854_775, .max - 1, .max]
        var state: UInt64 = 0x5EED_E0F1
        for _ in 0..<40 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            values.append(Int64(bitPattern: z ^ (z >> 31)) >> Int64(z % 40))
        }
        return values
    }()

    static func credential(expiring seconds: Int64, persistence: Persistence = .permanent) -> Credential {
        var credential = Credential(user: "alice", password: "pw", persistence: persistence)
        credential.expiresEpochSeconds = seconds
        return credential
    }

    @Test func everyWriteTakesTheRangeAndRefusesTheRest() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        for seconds in Self.candidates {
            let credential = Self.credential(expiring: seconds)
            if Credential.expiryRange.contains(seconds) {
                try storage.set(credential, for: Self.space)
                #expect(try storage.credentials(for: Self.space)["alice"]?.expiresEpochSeconds == seconds)
            } else {
                #expect("\(seconds)") {
                    try storage.set(credential, for: Self.space)
                } throws: { ($0 as? CredentialStorageError)?.code == .invalidInput }
            }
            // Whatever was tried, every listing still answers.
            _ = try storage.entries()
            _ = try storage.allCredentials()
        }
    }

    @Test func aBundleItemOutsideTheRangeIsRefusedWithTheStoreUnchanged() throws {
        let sender = try SyncPeer(), receiver = try SyncPeer()
        try trust([sender, receiver], [sender, receiver])
        let identity = try sender.storage.deviceIdentity()
        for seconds: Int64 in [.max, -1, 253_402_300_800] {
            var details = ByteWriter(capacity: 32)
            StoreKeyring.appendDetails(of: Self.credential(expiring: seconds, persistence: .synchronizable), to: &details)
            let item = BundleItem(
                space: Self.space, user: "alice", stamp: HybridTimestamp(wall: SystemClock().now(), counter: 0, device: identity.deviceID),
                password: "pw", details: details.bytes)
            let contents = BundleContents(senderDevice: identity.deviceID, signer: identity.publicKey, created: SystemClock().now(), items: [item], defaults: [])
            let url = sender.file("expiry-\(seconds).csbundle")
            try Data(try BundleFormat.write(contents, protection: .recipients([try receiver.publicKey]), signer: identity)).write(to: url)
            let before = try StoreSnapshot(receiver.storage)
            #expect("\(seconds)") {
                try receiver.storage.sync.importBundle(from: url)
            } throws: { ($0 as? CredentialStorageError)?.code == .invalidInput }
            #expect(try StoreSnapshot(receiver.storage) == before)
        }
    }
}
