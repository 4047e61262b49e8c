import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

/// What an import from a device this store is stale with (``StalePeer``) does beyond the merge.
extension Mutation {
    /// Withdraws a synchronizable item the stale device's bundle no longer carries: its credential
    /// goes, and its register becomes a tombstone at the item's own reading, so the withdrawal
    /// never wins over any later change; at that reading it outranks the live item, so every store
    /// that still holds that very version deletes it too. It is remembered from now
    /// (``SyncItemState/rememberedSince``): by its reading it would already be forgotten.
    mutating func withdrawStale(_ state: SyncItemState, spaceIndex: BlindIndex, userIndex: BlindIndex) throws {
        try recordStaleTombstone(state, spaceIndex: spaceIndex, userIndex: userIndex)
        guard let row = try transaction.credential(space: spaceIndex, user: userIndex), row.persistence == .synchronizable else { return }
        try transaction.deleteCredential(space: spaceIndex, user: userIndex)
        if try transaction.defaultChoice(space: spaceIndex)?.userIndex == userIndex {
            try transaction.deleteDefaultChoice(space: spaceIndex)
        }
        try log(.removed, state.space, state.user, .synchronizable)
        announce(.removed, state.space, state.user, .synchronizable)
    }

    /// Refuses a live item of the stale device's bundle that ``isStaleArrival(_:spaceIndex:userIndex:peer:)``:
    /// a tombstone at its reading, remembered from now, so that the next bundle carrying it (this
    /// store is no longer stale once it merged the device) does not bring it back, and so that the
    /// refusal reaches the stores that still hold it.
    mutating func refuseStale(_ remote: BundleItem, spaceIndex: BlindIndex, userIndex: BlindIndex) throws {
        try recordStaleTombstone(
            SyncItemState(space: remote.space, user: remote.user, stamp: remote.stamp, deleted: true),
            spaceIndex: spaceIndex, userIndex: userIndex)
    }

    private mutating func recordStaleTombstone(_ state: SyncItemState, spaceIndex: BlindIndex, userIndex: BlindIndex) throws {
        var tombstone = state
        tombstone.deleted = true
        tombstone.rememberedSince = max(clock.now(), state.stamp.wall + 1)
        tombstone.unpublished = true
        try ledger.record(tombstone, spaceIndex: spaceIndex, userIndex: userIndex)
    }

    /// Whether a live item of the stale device's bundle is one this store lacks (no register at
    /// all) although it was last changed before the last merge with that device: this store had
    /// it then, or that device learnt it since from elsewhere, and this store's deletion of it may
    /// have expired here before it reached the fleet. Such an item is not added.
    func isStaleArrival(_ remote: BundleItem, spaceIndex: BlindIndex, userIndex: BlindIndex, peer: StalePeer) throws -> Bool {
        guard remote.password != nil, peer.predatesLastMerge(remote.stamp) else { return false }
        return try ledger.item(spaceIndex: spaceIndex, userIndex: userIndex) == nil
    }

    /// Withdraws every live item last changed before the last merge with `peer` that the bundle
    /// did not carry (`carried`: the blind index pairs of its items); returns them, in key order.
    mutating func withdrawStaleItems(missingFrom carried: Set<[UInt8]>, peer: StalePeer) throws -> [DroppedCredential] {
        var withdrawn: [DroppedCredential] = []
        for sealed in try transaction.allSyncItems() where !sealed.deleted && !carried.contains(sealed.spaceIndex.bytes + sealed.userIndex.bytes) {
            let state = try keys.decrypt(sealed)
            guard peer.predatesLastMerge(state.stamp) else { continue }
            try withdrawStale(state, spaceIndex: sealed.spaceIndex, userIndex: sealed.userIndex)
            withdrawn.append(DroppedCredential(space: state.space, user: state.user))
        }
        return withdrawn
    }
}
