public import Foundation

/// A device a store trusts, as ``SyncDevice/trustedDevices()`` lists it.
public struct TrustedDevice: Hashable, Sendable {
    /// The device's key, as ``SyncDevice/deviceKey`` returns it there.
    public var key: DeviceKey
    /// When this store began to trust it; nil for devices trusted before stores kept the time.
    public var trusted: Date?
    /// When a bundle it signed was last merged here; nil if none was.
    public var lastMerged: Date?

    /// Creates a description of a trusted device.
    package init(key: DeviceKey, trusted: Date? = nil, lastMerged: Date? = nil) {
        self.key = key
        self.trusted = trusted
        self.lastMerged = lastMerged
    }
}
