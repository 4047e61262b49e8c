/// One entry of a bundle's record of what its writer merged (``BundleContents/merged``): a device
/// the writer trusts, and when the newest bundle of it that the writer merged was made, by that
/// device's clock.
struct BundleMergeNote: Hashable, Sendable {
    var device: DeviceKey
    var created: Int64
}
