/// The fields of a bundle's metadata chunk.
struct BundleMetadata: Hashable, Sendable {
    var senderDevice: [UInt8]
    /// The signer's key, in recipient mode.
    var signer: DeviceKey?
    var created: Int64
    var itemCount: Int64
    var defaultCount: Int64
    /// How many revocation statements follow the metadata (0 before format 3).
    var revocationCount: Int64 = 0
    /// Which devices' bundles the writer merged, and the newest of each (none before format 4).
    var merged: [BundleMergeNote] = []
}
