import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

/// What an import from a device this store is stale with (``StalePeer``) does beyond the merge.
extension Mutation {
    /// Withdraws a synchronizable item the stale device's bundle no longer carries: its credential
    /// goes, and its register becomes a tombstone at the item's own reading, so the withdrawal
    /// never wins over a copy of the same change elsewhere, nor over any later one, and expires
    /// with the other tombstones.
    mutating func withdrawStale(_ state: SyncItemState, spaceIndex: BlindIndex, userIndex: BlindIndex) throws {
        var tombstone = state
        tombstone.deleted = true
        try ledger.record(tombstone, spaceIndex: spaceIndex, userIndex: userIndex)
        guard let row = try transaction.credential(space: spaceIndex, user: userIndex), row.persistence == .synchronizable else { return }
        try transaction.deleteCredential(space: spaceIndex, user: userIndex)
        if try transaction.defaultChoice(space: spaceIndex)?.userIndex == userIndex {
            try transaction.deleteDefaultChoice(space: spaceIndex)
        }
        try log(.removed, state.space, state.user, .synchronizable)
        announce(.removed, state.space, state.user, .synchronizable)
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
