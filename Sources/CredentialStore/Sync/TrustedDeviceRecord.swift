/// A device's row in the trusted devices table: a trusted device, or a revoked one (which the row
/// keeps so its revocation travels on and its bundles stay refused).
struct TrustedDeviceRecord: Hashable, Sendable {
    var publicKey: DeviceKey
    var trusted: Int64?
    var lastMerged: Int64?
    /// The statement that revoked the device; nil while it is trusted.
    var revocation: RevocationStatement?
    /// When the device was trusted here again after a revocation: the time, on the revoker's clock,
    /// of the revocation that trust overrode. Revocations of it made up to then are passed over;
    /// both times are the revoker's clock, so no skew between machines decides it.
    var overridesRevocationsUpTo: Int64?
    /// When the newest bundle of the device merged here was made, by the device's clock: what
    /// this store's bundles tell the device it has merged (``BundleContents/merged``).
    var lastMergedCreated: Int64?
    /// When the newest bundle of this store that the device has merged was made, by this store's
    /// clock, as the device's own bundle says: the deletions that bundle carried have reached the
    /// device (``SyncLedger/dropExpiredTombstones()``).
    var mergedOwnBundle: Int64?

    static let revocationTag: UInt8 = 0x52
    static let overrideTag: UInt8 = 0x4F
    static let lastMergedCreatedTag: UInt8 = 0x43
    static let mergedOwnBundleTag: UInt8 = 0x4D

    init(publicKey: DeviceKey, trusted: Int64? = nil, lastMerged: Int64? = nil, revocation: RevocationStatement? = nil, overridesRevocationsUpTo: Int64? = nil) {
        self.publicKey = publicKey
        self.trusted = trusted
        self.lastMerged = lastMerged
        self.revocation = revocation
        self.overridesRevocationsUpTo = overridesRevocationsUpTo
    }

    var isTrusted: Bool { revocation == nil }
}
