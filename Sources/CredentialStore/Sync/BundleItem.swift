import CredentialStoreCore

/// One synchronizable item as a bundle carries it; a nil password is a deletion (tombstone).
struct BundleItem: Hashable, Sendable {
    var space: ProtectionSpace
    var user: String
    var stamp: HybridTimestamp
    var password: String?
    /// The credential's details (expiry, refresh token, label, comment, attributes) as the store
    /// seals them after user and password (``StoreKeyring/appendDetails(of:to:)``); empty when it
    /// has none, and always in a bundle of format 1, which predates them.
    var details: [UInt8] = []
    /// For a tombstone a stale store recorded: when, by that store's clock (``SyncItemState/rememberedSince``).
    /// Format 2 and later carry it where a live item's details go.
    var rememberedSince: Int64? = nil
}
