package import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
package import Foundation

// Entry points for the test targets and the harnesses in this package: what they need of the
// library's internals, without `@testable import`. Not public API.

/// One credential of a bundle written with ``CredentialStorage/writeSignedBundle(items:defaults:created:recipients:itemLimit:to:)``,
/// stamped by the writing store's device at the clock reading given.
///
/// `package`, not public: the test targets and the harnesses forge bundles that an export never
/// writes (old or future stamps, invalid fields, tens of thousands of items at once) without
/// reaching into the sync engine's internals.
package struct SignedBundleItem: Hashable, Sendable {
    package var space: ProtectionSpace
    package var user: String
    /// The password; nil is a deletion (a tombstone).
    package var password: String?
    /// The stamp's wall clock, in milliseconds since 1970, and its counter.
    package var wall: Int64
    package var counter: Int64

    package init(space: ProtectionSpace, user: String, password: String?, wall: Int64, counter: Int64 = 0) {
        self.space = space
        self.user = user
        self.password = password
        self.wall = wall
        self.counter = counter
    }
}

/// One default choice of a bundle written with ``CredentialStorage/writeSignedBundle(items:defaults:created:recipients:itemLimit:to:)``;
/// a nil user is "no default".
package struct SignedBundleDefault: Hashable, Sendable {
    package var space: ProtectionSpace
    package var user: String?
    package var wall: Int64
    package var counter: Int64

    package init(space: ProtectionSpace, user: String?, wall: Int64, counter: Int64 = 0) {
        self.space = space
        self.user = user
        self.wall = wall
        self.counter = counter
    }
}

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
