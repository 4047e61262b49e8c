/// What a bundle holds once opened and checked.
struct BundleContents: Sendable {
    var senderDevice: [UInt8]
    /// The signer's key, for a recipient-mode bundle (passphrase bundles are not signed).
    var signer: DeviceKey?
    var created: Int64
    var items: [BundleItem]
    var defaults: [BundleDefault]
    /// The revocations the writer applied (its own untrusts and those it relays); format 3 on.
    var revocations: [RevocationStatement] = []
    /// For each device whose bundle the writer merged: that device's key and when the newest
    /// bundle of it the writer merged was made, by its own clock; format 4 on. A device reading
    /// its own key here learns which of its bundles the writer has merged, so which of its
    /// deletions the writer holds (``SyncLedger/dropExpiredTombstones()``).
    var merged: [BundleMergeNote] = []
}
