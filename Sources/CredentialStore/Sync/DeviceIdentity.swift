import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import Foundation

/// This store's identity among the machines it syncs with: a random device id, which breaks
/// clock ties, and an Ed25519 key pair, which signs its bundles and (converted to X25519) opens
/// bundles sealed to it.
struct DeviceIdentity: Sendable {
    static let idBytes = 16

    var deviceID: [UInt8]
    var publicKey: DeviceKey
    var secretKey: SecureBytes

    /// This store's device as its sealed row holds it; a row whose key is not a key's length was
    /// altered (its secret would not open either).
    init(opening sealed: SealedDevice, keys: StoreKeyring) throws {
        guard let publicKey = DeviceKey(checking: sealed.publicKey) else { throw StoreKeyring.tampered }
        self.init(deviceID: sealed.deviceID, publicKey: publicKey, secretKey: try keys.decryptDeviceSecret(sealed))
    }

    init(deviceID: [UInt8], publicKey: DeviceKey, secretKey: SecureBytes) {
        self.deviceID = deviceID
        self.publicKey = publicKey
        self.secretKey = secretKey
    }
}

/// The sync bookkeeping of one write transaction: the clock, the device, and the item and
/// default registers, read and written through the transaction.
struct SyncLedger {
    let transaction: any CredentialRepositoryWriting
    let keys: StoreKeyring
    let clock: any StoreClock

    /// This store's device, created on first need.
    func device() throws -> DeviceIdentity {
        if let sealed = try transaction.device() {
            return try DeviceIdentity(opening: sealed, keys: keys)
        }
        let (publicKey, secretKey) = try Sodium.signingKeyPair()
        let deviceID = Sodium.randomBytes(DeviceIdentity.idBytes)
        try transaction.setDevice(SealedDevice(
            deviceID: deviceID, publicKey: publicKey,
            sealedSecretKey: keys.encryptDeviceSecret(secretKey, deviceID: deviceID, publicKey: publicKey)))
        return DeviceIdentity(deviceID: deviceID, publicKey: DeviceKey(bytes: publicKey), secretKey: secretKey)
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

    func dropExpiredTombstones() throws {
        try transaction.deleteTombstones(before: clock.now() - Self.tombstoneLifetimeMillis)
    }
}
