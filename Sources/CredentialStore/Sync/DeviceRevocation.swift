public import Foundation

/// A device this store no longer trusts, as ``SyncDevice/revokedDevices()`` lists it and
/// ``ImportReport/revocations`` reports it: who revoked it, and when.
///
/// A revocation made on any machine this store trusts reaches this store with that machine's
/// bundles (or any bundle relaying it), and this store relays it on; docs/sync-format.md,
/// "Revocation". Only ``SyncDevice/trust(_:)`` here brings the device back.
public struct DeviceRevocation: Hashable, Sendable, Codable {
    /// The revoked device's key.
    public var key: DeviceKey
    /// The key of the device that revoked it: this store's own ``SyncDevice/deviceKey``
    /// when the untrust was made here.
    public var revokedBy: DeviceKey
    /// When the revoking device untrusted it, by that device's clock.
    public var revoked: Date

    /// Creates a description of a revocation.
    package init(key: DeviceKey, revokedBy: DeviceKey, revoked: Date) {
        self.key = key
        self.revokedBy = revokedBy
        self.revoked = revoked
    }

    init(_ statement: RevocationStatement) {
        self.init(key: statement.revoked, revokedBy: statement.revoker, revoked: Date(timeIntervalSince1970: Double(statement.revokedAt) / 1000))
    }
}
