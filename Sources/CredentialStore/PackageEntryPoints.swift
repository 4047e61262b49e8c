package import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
package import Foundation

// Entry points for the test targets and the harnesses in this package: what they need of the
// library's internals, without `@testable import`. Not public API.

extension CredentialStorage {
    /// Stores `credential` as `space`'s default without the field rules a `set` applies, as a
    /// store written by an attacker holding its key could hold it: for the tests that check every
    /// reader of a store escapes or refuses what it reads.
    package func setWithoutValidation(_ credential: Credential, for space: ProtectionSpace) throws {
        try mutate { try $0.set(credential, in: space, makeDefault: true, fields: .replacingDetails, options: .removeSynchronizable) }
    }

    /// Stores `credential` as `space`'s default with its details as they are (a `nil` clears
    /// one; a tier left unset stays): for git's credential helper, whose approval replaces the
    /// password's expiry and refresh token with what git sent (none when it sent none).
    ///
    /// - Throws: what ``set(_:for:options:)`` throws.
    package func setDefaultCredentialExactly(_ credential: Credential, for space: ProtectionSpace, options: RemovalOptions = []) throws {
        try credential.validate(in: space)
        guard credential.persistence != .none else { return }
        try mutate { try $0.set(credential, in: space, makeDefault: true, choosingDefault: false, fields: .replacingDetails, options: options) }
    }

    /// The sync clock's wall reading now: milliseconds since 1970, as stamps and bundles carry it.
    package static func syncClockNow() -> Int64 {
        SystemClock().now()
    }

    /// Writes a recipient-mode bundle signed by this store's device key, holding exactly `items`
    /// and `defaults`, to `url`.
    ///
    /// - Parameters:
    ///   - recipients: The device keys of the stores that may open it.
    ///   - itemLimit: The largest encoded item the writer accepts; nil is the reader's limit.
    package func writeSignedBundle(
        items: [SignedBundleItem], defaults: [SignedBundleDefault] = [], created: Int64,
        recipients: [DeviceKey], itemLimit: Int? = nil, to url: URL
    ) throws {
        let device = try deviceIdentity()
        let contents = BundleContents(
            senderDevice: device.deviceID, signer: device.publicKey, created: created,
            items: items.map {
                BundleItem(space: $0.space, user: $0.user,
                           stamp: HybridTimestamp(wall: $0.wall, counter: $0.counter, device: device.deviceID), password: $0.password)
            },
            defaults: defaults.map {
                BundleDefault(space: $0.space, user: $0.user, stamp: HybridTimestamp(wall: $0.wall, counter: $0.counter, device: device.deviceID))
            })
        let bytes = try BundleFormat.write(
            contents, protection: .recipients(recipients), signer: device,
            itemLimit: itemLimit ?? BundleFormat.maximumItemBytes)
        try Data(bytes).write(to: url)
    }
}
