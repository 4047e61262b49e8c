package import CredentialStoreCrypto

/// One sealed row as a write leaves it or finds it: its table, its primary key, and the bytes
/// that vouch for every other column (the authentication tags of its ciphertexts, whose
/// associated data binds them, and any clear column no ciphertext binds).
///
/// The persistence layer builds these from the rows it writes and deletes, and from every row
/// when asked (``CredentialRepositoryReading/forEachFingerprint(in:_:)``); what is done with
/// them (the table seal) is the storage layer's.
package struct SealedRowFingerprint: Hashable, Sendable {
    /// The sealed tables, by the number their rows' contributions are hashed under. Which SQL
    /// table each is, and how every one of its columns is covered, is decided beside the write
    /// pipeline that consumes these rows.
    package enum Table: UInt8, CaseIterable, Sendable {
        // Sealed since migration 0004.
        case credentials = 1, defaultChoices = 2, trustedDevices = 3
        // Sealed since migration 0007: the sync state, which decides what a merge keeps.
        case syncItems = 4, syncDefaults = 5, device = 6, syncClock = 7
        // Sealed since migration 0010: the search tags, which decide what a search finds.
        case credentialTags = 8
        // Sealed since migration 0011: the versions that lost a concurrent edit, which a restore brings back.
        case keptVersions = 9

        /// The tables the seal covered before migration 0007.
        package static let sinceTableSeal: [Table] = [.credentials, .defaultChoices, .trustedDevices]
        /// The tables migration 0007 brought under the seal.
        package static let sinceSyncSeal: [Table] = [.syncItems, .syncDefaults, .device, .syncClock]
        /// The tables the seal covered before the tree (migration 0008): what the legacy XOR seal
        /// of migrations 0004 and 0007 sums. Tables sealed later never enter it.
        package static let legacySeal: [Table] = sinceTableSeal + sinceSyncSeal
    }

    package var table: Table
    package var key: [UInt8]
    package var tags: [UInt8]
    /// A credential row's origin index (empty for the other tables): the row is found by it too
    /// (every credential of a host), so the seal groups it under its origin as well.
    package var originIndex: [UInt8] = []
    /// The row's first key column as stored (the space index, or a trusted device's key index;
    /// empty for the one-row tables): what the seal groups it by. Taken from the column, not cut
    /// from `key`, whose columns are concatenated without their lengths.
    package var group: [UInt8]

    package init(table: Table, key: [UInt8], tags: [UInt8], originIndex: [UInt8] = [], group: [UInt8]) {
        self.table = table
        self.key = key
        self.tags = tags
        self.originIndex = originIndex
        self.group = group
    }
}

extension SealedRowFingerprint {
    /// The tag of a sealed field: its last bytes (nonce ‖ ciphertext ‖ tag).
    private static func tag(_ sealed: [UInt8]) -> [UInt8] { Array(sealed.suffix(Sodium.aeadTagBytes)) }

    package init(_ row: SealedCredential) {
        self.init(table: .credentials, key: row.spaceIndex.bytes + row.userIndex.bytes,
                  tags: Self.tag(row.sealedSpace) + Self.tag(row.sealedCredential), originIndex: row.originIndex.bytes,
                  group: row.spaceIndex.bytes)
    }

    package init(_ choice: SealedDefault) {
        self.init(table: .defaultChoices, key: choice.spaceIndex.bytes + choice.userIndex.bytes, tags: Self.tag(choice.sealedUser),
                  group: choice.spaceIndex.bytes)
    }

    package init(trustedKeyIndex: BlindIndex, sealedPublicKey: [UInt8]) {
        self.init(table: .trustedDevices, key: trustedKeyIndex.bytes, tags: Self.tag(sealedPublicKey), group: trustedKeyIndex.bytes)
    }

    /// With its clear columns as `SQLiteAccess` reads integers (8 bytes, big-endian).
    package init(_ item: SealedSyncItem) {
        self.init(table: .syncItems, key: item.spaceIndex.bytes + item.userIndex.bytes,
                  tags: Self.tag(item.sealedState) + Self.bigEndian(item.deleted ? 1 : 0) + Self.bigEndian(item.wall),
                  group: item.spaceIndex.bytes)
    }

    package init(_ choice: SealedSyncDefault) {
        self.init(table: .syncDefaults, key: choice.spaceIndex.bytes, tags: Self.tag(choice.sealedState), group: choice.spaceIndex.bytes)
    }

    package init(_ device: SealedDevice) {
        self.init(table: .device, key: [], tags: device.deviceID + device.publicKey + Self.tag(device.sealedSecretKey), group: [])
    }

    /// A tag row has no ciphertext: its key is the whole row (tag, then the credential's key),
    /// grouped by its tag.
    package init(tagIndex: BlindIndex, space spaceIndex: BlindIndex, user userIndex: BlindIndex) {
        self.init(table: .credentialTags, key: tagIndex.bytes + spaceIndex.bytes + userIndex.bytes, tags: [], group: tagIndex.bytes)
    }

    /// With its clear time as `SQLiteAccess` reads integers (8 bytes, big-endian), in the key.
    package init(_ version: SealedKeptVersion) {
        self.init(table: .keptVersions, key: version.spaceIndex.bytes + version.userIndex.bytes + Self.bigEndian(version.kept),
                  tags: Self.tag(version.sealedVersion), group: version.spaceIndex.bytes)
    }

    /// The clock has no ciphertext: its reading.
    package init(syncClockWall wall: Int64, counter: Int64) {
        self.init(table: .syncClock, key: [], tags: Self.bigEndian(wall) + Self.bigEndian(counter), group: [])
    }

    /// An integer column as `SQLiteAccess` puts it in a fingerprint.
    private static func bigEndian(_ value: Int64) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }
}
