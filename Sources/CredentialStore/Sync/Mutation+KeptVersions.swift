import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

/// Keeping the losers of concurrent edits (docs/sync-format.md, "Concurrent edits").
extension Mutation {
    /// Keeps `version`, the loser of a concurrent edit, dropping the credential's oldest kept
    /// versions beyond ``SyncDevice/keptVersionsPerCredential``.
    mutating func keep(_ version: KeptVersionState, spaceIndex: BlindIndex, userIndex: BlindIndex) throws {
        let existing = try transaction.keptVersions(space: spaceIndex).filter { $0.userIndex == userIndex }.map(\.kept).sorted()
        // The time is the row's key: two losses of one credential in one millisecond stay two rows.
        var kept = version.kept
        if let last = existing.last, last >= kept { kept = last + 1 }
        var state = version
        state.kept = kept
        try transaction.insertKeptVersion(keys.encrypt(state, spaceIndex: spaceIndex, userIndex: userIndex))
        for old in existing.dropLast(max(0, CredentialStorage.keptVersionsPerCredential - 1)) {
            try transaction.deleteKeptVersion(space: spaceIndex, user: userIndex, kept: old)
        }
    }

    /// Reports a credential whose local change lost a concurrent edit, to the import's report and
    /// to this instance's subscribers.
    ///
    /// Announced, not logged: a process of an earlier version reading the change log would not
    /// know the kind; other processes hear the credential's update as usual.
    mutating func noteConflict(_ space: ProtectionSpace, _ user: String, kept: Bool) {
        conflicts.append(SyncConflict(space: space, user: user, kept: kept))
        announce(.conflict, space, user, .synchronizable)
    }

    /// Drops the kept versions replaced longer ago than deletions are remembered.
    func dropExpiredKeptVersions() throws {
        try transaction.deleteKeptVersions(before: clock.now() - SyncLedger.tombstoneLifetimeMillis)
    }
}
