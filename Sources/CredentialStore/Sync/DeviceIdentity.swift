import Foundation

/// This store's identity among the machines it syncs with: a random device id, which breaks
/// clock ties, and an Ed25519 key pair, which signs its bundles and (converted to X25519) opens
/// bundles sealed to it.
struct DeviceIdentity: Sendable {
    static let idBytes = 16

    var deviceID: [UInt8]
    var publicKey: [UInt8]
    var secretKey: SecureBytes

    /// The text form people copy between machines: `csdev1:` and the public key in base64url.
    static let publicKeyPrefix = "csdev1:"

    static func text(of publicKey: [UInt8]) -> String {
        publicKeyPrefix + Data(publicKey).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func publicKey(fromText text: String) throws -> [UInt8] {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix(publicKeyPrefix) else {
            throw CredentialStorageError(.invalidInput, "a device key starts with \(publicKeyPrefix); copy it from `credstore device show` on the other machine")
        }
        var base64 = String(trimmed.dropFirst(publicKeyPrefix.count))
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), data.count == Sodium.signPublicKeyBytes else {
            throw CredentialStorageError(.invalidInput, "the device key is damaged; copy it again from `credstore device show`")
        }
        return [UInt8](data)
    }
}

/// The sync bookkeeping of one write transaction: the clock, the device, and the item and
/// default registers, read and written through the transaction.
struct SyncLedger {
    let transaction: any CredentialRepositoryWriting
    let keys: StoreKeys
    let clock: any StoreClock

    /// This store's device, created on first need.
    func device() throws -> DeviceIdentity {
        if let sealed = try transaction.device() {
            return DeviceIdentity(deviceID: sealed.deviceID, publicKey: sealed.publicKey, secretKey: try keys.openDeviceSecret(sealed))
        }
        let (publicKey, secretKey) = try Sodium.signingKeyPair()
        let deviceID = Sodium.randomBytes(DeviceIdentity.idBytes)
        try transaction.setDevice(SealedDevice(
            deviceID: deviceID, publicKey: publicKey,
            sealedSecretKey: keys.sealDeviceSecret(secretKey, deviceID: deviceID, publicKey: publicKey)))
        return DeviceIdentity(deviceID: deviceID, publicKey: publicKey, secretKey: secretKey)
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

    func item(spaceIndex: [UInt8], userIndex: [UInt8]) throws -> SyncItemState? {
        try transaction.syncItem(space: spaceIndex, user: userIndex).map(keys.open)
    }

    func record(_ state: SyncItemState, spaceIndex: [UInt8]? = nil, userIndex: [UInt8]? = nil) throws {
        try transaction.upsertSyncItem(keys.seal(state, spaceIndex: spaceIndex, userIndex: userIndex))
    }

    func defaultChoice(spaceIndex: [UInt8]) throws -> SyncDefaultState? {
        try transaction.syncDefault(space: spaceIndex).map(keys.open)
    }

    func record(_ state: SyncDefaultState, spaceIndex: [UInt8]? = nil) throws {
        try transaction.upsertSyncDefault(keys.seal(state, spaceIndex: spaceIndex))
    }

    /// How long a deletion is remembered, so that it reaches machines that sync rarely. A bundle
    /// older than this is refused: it could bring back what was deleted.
    static let tombstoneLifetimeMillis: Int64 = 180 * 24 * 3600 * 1000

    func dropExpiredTombstones() throws {
        try transaction.deleteTombstones(before: clock.now() - Self.tombstoneLifetimeMillis)
    }
}
