/// The time windows of sync, in milliseconds, and why each is as long as it is
/// (docs/sync-format.md, "Windows and margins").
///
/// Every window is measured on some machine's wall clock, and the machines' clocks may disagree by
/// up to ``maximumClockSkew``. So a deletion must be remembered for longer than any bundle that
/// could still bring the deleted item back is accepted, by more than the clocks can disagree.
enum SyncWindows {
    static let day: Int64 = 24 * 3600 * 1000

    /// How far ahead of this machine's clock a reading may be: more is a broken clock (this
    /// machine's or the writer's), and accepting the reading would let that writer win every
    /// later conflict.
    static let maximumClockSkew: Int64 = day

    /// How old a bundle may be, judged by the newest clock reading it carries (its creation time or
    /// the newest change in it, whichever is later): older, it is refused, as it could bring back
    /// what was deleted since.
    static let bundleLifetime: Int64 = 180 * day

    /// Room beyond the skews for clocks corrected by hand, a deletion relayed by a third machine,
    /// and a bundle that takes days to travel.
    static let margin: Int64 = 7 * day

    /// How long a deletion is remembered: longer than any accepted bundle can be old, plus the skew
    /// between the clock that stamped the tombstone and the clock that judges the bundle, each way,
    /// plus the margin. A bundle still accepted therefore never meets a store that has forgotten a
    /// deletion made after that bundle was written.
    static let tombstoneLifetime: Int64 = bundleLifetime + 2 * maximumClockSkew + margin

    /// A store that has not merged a trusted device's bundle for longer than this is stale with
    /// respect to that device: the device's deletions since may have expired before they reached
    /// this store. Bundles are refreshed at least every 30 days, so an up-to-date store merges each
    /// device far more often than this.
    static let staleAfter: Int64 = bundleLifetime
}
