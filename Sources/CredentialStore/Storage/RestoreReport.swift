import CredentialStoreCore

/// What ``StoreFile/restore(from:passphrase:to:key:logger:rollbackAnchor:confirm:)`` puts
/// back, compared with the store it replaces: handed to its `confirm` before anything changes,
/// and returned once the backup is in place.
///
/// Credentials are compared by space and user, and by when each last changed. No password is
/// read for the comparison and none is in the report.
///
/// ## Topics
/// ### The backup
/// - ``restored``
/// ### The store it replaces
/// - ``replaced``
/// - ``Replaced``
/// - ``changedSince``
/// - ``addedSince``
/// - ``removedSince``
public struct RestoreReport: Hashable, Sendable {
    /// What was at the store's path before the restore.
    public enum Replaced: Hashable, Sendable {
        /// No store: the restore creates one.
        case nothing
        /// A store that opened with the key given, and whose credentials are compared.
        case compared
        /// A store that did not open with the key given, or failed its checks (tampered,
        /// damaged, rolled back, put in place of another): its credentials are not compared.
        case unreadable(CredentialStorageError)
    }

    /// Every credential of the backup, as ``CredentialStorage/entries(matching:)`` lists them.
    public var restored: [CredentialEntry]
    /// What the restore replaces.
    public var replaced: Replaced
    /// The replaced store's credentials that changed since the backup was taken (another
    /// modification time): they go back to the backup's values.
    public var changedSince: [CredentialEntry]
    /// The replaced store's credentials that the backup does not hold (added since it was taken):
    /// the restore removes them.
    public var addedSince: [CredentialEntry]
    /// The backup's credentials that the replaced store does not hold (removed since it was
    /// taken): they come back.
    public var removedSince: [CredentialEntry]

    /// Compares `current`, the listing of the store being replaced, with `restored`, the backup's.
    init(restored: [CredentialEntry], replacing current: [CredentialEntry]?, unreadable: CredentialStorageError? = nil) {
        self.restored = restored
        changedSince = []
        addedSince = []
        removedSince = []
        if let unreadable {
            replaced = .unreadable(unreadable)
            return
        }
        guard let current else {
            replaced = .nothing
            return
        }
        replaced = .compared
        struct Key: Hashable {
            var space: ProtectionSpace
            var user: String
        }
        let backedUp = Dictionary(restored.map { (Key(space: $0.space, user: $0.user), $0) }, uniquingKeysWith: { first, _ in first })
        let present = Dictionary(current.map { (Key(space: $0.space, user: $0.user), $0) }, uniquingKeysWith: { first, _ in first })
        for entry in current {
            guard let old = backedUp[Key(space: entry.space, user: entry.user)] else {
                addedSince.append(entry)
                continue
            }
            if old.modified != entry.modified { changedSince.append(entry) }
        }
        removedSince = restored.filter { present[Key(space: $0.space, user: $0.user)] == nil }
    }
}
