import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence

/// The sync bookkeeping of one write transaction: the clock, the device, and the item and
/// default registers, read and written through the transaction.
struct SyncLedger {
    let transaction: any CredentialRepositoryWriting
    let keys: StoreKeyring
    let clock: any StoreClock

    /// This store's device, created on first need (for `place`, when known).
    func device(place: DevicePlace? = nil) throws -> DeviceIdentity {
        if let sealed = try transaction.device() {
            return try DeviceIdentity(opening: sealed, keys: keys)
        }
        let identity = try DeviceIdentity.make(place: place)
        try transaction.setDevice(identity.sealed(keys: keys))
        return identity
    }

    /// This store's device as it may be used at `place`: the stored one when it was made there;
    /// one made before places were recorded now records `place` (same id and keys); one made
    /// elsewhere (the store was copied or restored onto another machine or home) is replaced by a
    /// new identity for `place`, which trusts the replaced key as another device of the fleet.
    /// The trusted devices and sync state stay.
    ///
    /// - Returns: the identity, and the one it replaced, if any.
    func device(settlingAt place: DevicePlace?, renew: Bool = false) throws -> (current: DeviceIdentity, replaced: DeviceIdentity?) {
        guard let sealed = try transaction.device() else { return (try device(place: place), nil) }
        var identity = try DeviceIdentity(opening: sealed, keys: keys)
        if !renew {
            // Where the place is unknown (no state folder), nothing can be told apart.
            guard let place, identity.place != place else { return (identity, nil) }
            if identity.place == nil {
                identity.place = place
                try transaction.setDevice(identity.sealed(keys: keys))
                return (identity, nil)
            }
        }
        let renewed = try DeviceIdentity.make(place: place)
        try transaction.setDevice(renewed.sealed(keys: keys))
        let index = keys.trustedKeyIndex(identity.publicKey)
        if try transaction.trustedDevice(keyIndex: index) == nil {
            try transaction.addTrustedDevice(keyIndex: index, sealedPublicKey: keys.encryptTrustedDevice(TrustedDeviceRecord(publicKey: identity.publicKey, trusted: clock.now())))
        }
        return (renewed, identity)
    }

    /// A fresh reading for a local change.
    func tick() throws -> HybridTimestamp {
        let clock = try HybridTimestamp.tick(clock: try transaction.syncClock() ?? (0, 0), now: clock.now())
        try transaction.setSyncClock(wall: clock.wall, counter: clock.counter)
        // The id alone: unsealing the secret key would cost a guarded allocation per tick.
        let deviceID = try transaction.device()?.deviceID ?? device().deviceID
        return HybridTimestamp(wall: clock.wall, counter: clock.counter, device: deviceID)
    }

    /// Moves the clock past a remote reading, so later local changes win over it.
    func receive(_ remote: HybridTimestamp) throws {
        let clock = try HybridTimestamp.receive(clock: try transaction.syncClock() ?? (0, 0), remote: remote, now: clock.now())
        try transaction.setSyncClock(wall: clock.wall, counter: clock.counter)
    }

    func item(spaceIndex: BlindIndex, userIndex: BlindIndex) throws -> SyncItemState? {
        try transaction.syncItem(space: spaceIndex, user: userIndex).map(keys.decrypt)
    }

    func record(_ state: SyncItemState, spaceIndex: BlindIndex? = nil, userIndex: BlindIndex? = nil) throws {
        try transaction.upsertSyncItem(keys.encrypt(state, spaceIndex: spaceIndex, userIndex: userIndex))
    }

    func defaultChoice(spaceIndex: BlindIndex) throws -> SyncDefaultState? {
        try transaction.syncDefault(space: spaceIndex).map(keys.decrypt)
    }

    func record(_ state: SyncDefaultState, spaceIndex: BlindIndex? = nil) throws {
        try transaction.upsertSyncDefault(keys.encrypt(state, spaceIndex: spaceIndex))
    }

    /// How long a deletion is remembered, so that it reaches machines that sync rarely: longer
    /// than any bundle that could bring the deleted item back is accepted (``SyncWindows``).
    static let tombstoneLifetimeMillis: Int64 = SyncWindows.tombstoneLifetime

    /// Forgets the deletions remembered for longer than ``tombstoneLifetimeMillis`` that every
    /// trusted device holds: each device's own bundle says it merged a bundle of this store made
    /// more than ``SyncWindows/margin`` after the deletion was recorded (a deletion leaves in the
    /// next bundle, within the margin, or is recorded anew when it leaves later). While a trusted
    /// device has not (it is away, its bundles or this store's were refused, it was retired
    /// without being untrusted, it never synced), a deletion it may have missed stays, however
    /// old: forgotten, the copy that device still holds would come back with its next bundle, as
    /// a change this store has no record of.
    func dropExpiredTombstones() throws {
        var cutoff = clock.now() - Self.tombstoneLifetimeMillis
        for entry in try transaction.allTrustedDevices() {
            guard let record = keys.decryptTrustedDevice(keyIndex: entry.keyIndex, sealed: entry.sealedPublicKey) else { throw StoreKeyring.tampered }
            guard record.isTrusted else { continue }
            guard let merged = record.mergedOwnBundle, merged > Int64.min + SyncWindows.margin else { return }
            cutoff = min(cutoff, merged - SyncWindows.margin)
        }
        try transaction.deleteTombstones(before: cutoff)
    }
}
