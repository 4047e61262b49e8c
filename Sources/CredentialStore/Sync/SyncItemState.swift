import CredentialStoreCore

/// The last-writer-wins state of one synchronizable item: live (its password is in the
/// credentials table) or deleted (a tombstone, kept 189 days so the deletion reaches every machine: ``SyncWindows``).
struct SyncItemState: Hashable, Sendable {
    var space: ProtectionSpace
    var user: String
    var stamp: HybridTimestamp
    var deleted: Bool
    /// For a tombstone a stale store recorded (docs/sync-format.md, "Stale devices"): when it was
    /// recorded, later than the item's own reading. The tombstone is remembered from then rather
    /// than from its reading, which is older than deletions are remembered; without this it would
    /// be forgotten at once, and the item it refused would come back with the next bundle.
    var rememberedSince: Int64? = nil
    /// For a tombstone this store recorded (a removal made here, one that arrived in another
    /// device's bundle, a stale store's refusal): no bundle of this store has carried it yet. It
    /// is remembered until one does, however long that takes, and from then on as
    /// ``rememberedSince`` says: the devices that merge this store's bundle cannot have heard of
    /// it from here, so their copies, however old, would otherwise outlive it and come back.
    var unpublished = false
    /// For a tombstone this store recorded: when this store's own bundle first carried it, by
    /// this store's clock. Kept here only (it does not travel): the devices that report merging
    /// this store's bundles from then on hold it (``SyncLedger/dropExpiredTombstones()``).
    var publishedAt: Int64? = nil

    /// The time every store counts a tombstone's 189 days from: its recorded time if it has one,
    /// else its reading. Travels with it.
    var fleetBase: Int64 { rememberedSince ?? stamp.wall }

    /// The time this register's expiry counts from here (its clear `wall` column): a tombstone is
    /// forgotten ``SyncWindows/tombstoneLifetime`` after it, and after every trusted device has
    /// merged a bundle of this store made after it; an unpublished one never is.
    var expiryBase: Int64 { unpublished ? .max : max(fleetBase, publishedAt ?? .min) }
}
