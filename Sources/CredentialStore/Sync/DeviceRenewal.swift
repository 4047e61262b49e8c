/// A store's device identity replaced by a new one: the store was copied or restored onto
/// another machine or into another home (or `credstore device reset` asked for it).
///
/// The store keeps its credentials, trusted devices and sync state; it now trusts the replaced
/// key as another device, and its peers must trust the new key (``key``) before they seal
/// bundles to it or merge its own.
public struct DeviceRenewal: Hashable, Sendable {
    /// The new device id, in hex.
    public var id: String
    /// The new device key, for `credstore device trust` on the other machines.
    public var key: DeviceKey
    /// The replaced device id, in hex: the name of the bundle the store it was copied from writes.
    public var previousID: String
    /// The replaced device key, which this store now trusts as another device.
    public var previousKey: DeviceKey

    /// Creates a description of a renewal.
    package init(id: String, key: DeviceKey, previousID: String, previousKey: DeviceKey) {
        self.id = id
        self.key = key
        self.previousID = previousID
        self.previousKey = previousKey
    }
}
