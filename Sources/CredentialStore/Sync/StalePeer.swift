/// A trusted device this store has not merged for longer than deletions are remembered
/// (``SyncWindows/staleAfter``): a deletion made there since may have expired before it reached
/// this store, so an item the device's bundle no longer carries may be one it deleted.
///
/// While this store is stale with respect to the bundle's device, an import neither keeps what the
/// bundle lacks nor takes what this store lacks, for items last changed before the last merge with
/// that device: that device had those (or this store sent them since), and their absence on one
/// side is a deletion the other side missed. What either side changed after that merge still
/// travels. A device never merged here is not stale: it may be new to the fleet, and its first
/// bundle lacking an item says nothing about deletions.
struct StalePeer {
    /// When this store last merged a bundle of that device, by this store's clock.
    var lastMerged: Int64

    /// The device's staleness, from when its bundle was last merged here (nil: never) and now.
    init?(lastMerged: Int64?, now: Int64) {
        guard let lastMerged, now - lastMerged > SyncWindows.staleAfter else { return nil }
        self.lastMerged = lastMerged
    }

    /// Whether a change with this reading was made before this store last merged the device (or
    /// in the same millisecond). A change made here after that merge reads later: a hybrid
    /// logical clock never reads earlier than the wall clock at its last event.
    func predatesLastMerge(_ stamp: HybridTimestamp) -> Bool {
        stamp.wall <= lastMerged
    }
}
