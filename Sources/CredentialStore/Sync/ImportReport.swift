/// What an import changed, item by item (credentials, not default choices).
public struct ImportReport: Hashable, Sendable, Codable {
    /// Items this store did not have.
    public var added: Int
    /// Items whose password or tier the bundle replaced.
    public var updated: Int
    /// Items the bundle's deletions removed.
    public var removed: Int
    /// Items this store already had as new or newer.
    public var unchanged: Int
    /// Credentials dropped because this store had not merged the bundle's device for longer than
    /// deletions are remembered: items last changed before that merge which one side has and the
    /// other lacks, as the other side may have deleted them (docs/sync-format.md, "Stale devices").
    public var dropped: [DroppedCredential] = []
    /// Changes held back because the machine that made them has a clock more than 24 hours ahead
    /// of this one's; they merge once the clocks agree.
    public var heldBack = 0
    /// The device ids of the machines whose changes were held back (the name of the bundle each
    /// writes in a sync folder, as ``SyncDevice/deviceID`` spells it), sorted.
    public var clocksAhead: [String] = []
    /// The credentials whose change on this machine lost to a concurrent change in the bundle
    /// (counted in ``updated`` or ``removed`` too); docs/sync-format.md, "Concurrent edits".
    public var conflicts: [SyncConflict]
    /// The revocations the bundle carried that took effect here: devices this store trusted,
    /// revoked by a device it trusts (or this device itself, which stays as it is: the revoking
    /// store no longer reads its bundles nor seals to it).
    public var revocations: [DeviceRevocation] = []

    /// Creates a report.
    package init(added: Int = 0, updated: Int = 0, removed: Int = 0, unchanged: Int = 0, conflicts: [SyncConflict] = []) {
        self.added = added
        self.updated = updated
        self.removed = removed
        self.unchanged = unchanged
        self.conflicts = conflicts
    }
}
