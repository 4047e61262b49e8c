package import CredentialStoreCore
package import CredentialStoreCrypto

/// A credential row as the database holds it: blind indexes, tier and timestamps in the clear;
/// the space, and the user with the password, sealed, each bound to all the clear columns.
package struct SealedCredential: Hashable, Sendable {
    package var spaceIndex: BlindIndex
    package var userIndex: BlindIndex
    package var originIndex: BlindIndex
    package var persistence: Persistence
    package var created: Int64
    package var modified: Int64
    package var sealedSpace: [UInt8]
    /// User and password together, so a lookup opens one ciphertext.
    package var sealedCredential: [UInt8]
    /// The blind indexes of the credential's label and attributes, which a write keeps in
    /// `credential_tags` beside the row (``CredentialRepositoryWriting/upsert(_:)``), so that a
    /// search finds the row without opening every other. Set when the row is sealed; a row read
    /// back carries none (they are not columns of it).
    package var tagIndexes: [BlindIndex] = []

    package init(spaceIndex: BlindIndex, userIndex: BlindIndex, originIndex: BlindIndex, persistence: Persistence, created: Int64, modified: Int64, sealedSpace: [UInt8], sealedCredential: [UInt8]) {
        self.spaceIndex = spaceIndex
        self.userIndex = userIndex
        self.originIndex = originIndex
        self.persistence = persistence
        self.created = created
        self.modified = modified
        self.sealedSpace = sealedSpace
        self.sealedCredential = sealedCredential
    }
}

/// The default choice of one space: the chosen user's blind index and sealed name.
package struct SealedDefault: Hashable, Sendable {
    package var spaceIndex: BlindIndex
    package var userIndex: BlindIndex
    package var sealedUser: [UInt8]

    package init(spaceIndex: BlindIndex, userIndex: BlindIndex, sealedUser: [UInt8]) {
        self.spaceIndex = spaceIndex
        self.userIndex = userIndex
        self.sealedUser = sealedUser
    }
}

/// One entry of the change log that lets other processes announce what this one committed.
package struct SealedChangeEntry: Hashable, Sendable {
    package var sequence: Int64
    /// The store instance that committed it.
    package var writer: [UInt8]
    package var processID: Int32
    /// The kind, tier, space and user of each change, in order, sealed together.
    package var sealedChanges: [UInt8]
}

/// The sync state of one synchronizable item (live or tombstone), sealed; the flag and wall time
/// are clear for tombstone expiry and bound into the seal.
package struct SealedSyncItem: Hashable, Sendable {
    package var spaceIndex: BlindIndex
    package var userIndex: BlindIndex
    package var deleted: Bool
    package var wall: Int64
    package var sealedState: [UInt8]

    package init(spaceIndex: BlindIndex, userIndex: BlindIndex, deleted: Bool, wall: Int64, sealedState: [UInt8]) {
        self.spaceIndex = spaceIndex
        self.userIndex = userIndex
        self.deleted = deleted
        self.wall = wall
        self.sealedState = sealedState
    }
}

/// The last-writer-wins default choice of one space, sealed.
package struct SealedSyncDefault: Hashable, Sendable {
    package var spaceIndex: BlindIndex
    package var sealedState: [UInt8]

    package init(spaceIndex: BlindIndex, sealedState: [UInt8]) {
        self.spaceIndex = spaceIndex
        self.sealedState = sealedState
    }
}

/// This store's device identity for sync; the secret signing key sealed.
package struct SealedDevice: Hashable, Sendable {
    package var deviceID: [UInt8]
    package var publicKey: [UInt8]
    package var sealedSecretKey: [UInt8]

    package init(deviceID: [UInt8], publicKey: [UInt8], sealedSecretKey: [UInt8]) {
        self.deviceID = deviceID
        self.publicKey = publicKey
        self.sealedSecretKey = sealedSecretKey
    }
}

/// The stored table seal (see migration 0004).
package struct TableSeal: Hashable, Sendable {
    package var generation: Int64
    package var rowCount: Int64
    package var digest: [UInt8]
    package var mac: [UInt8]

    package init(generation: Int64, rowCount: Int64, digest: [UInt8], mac: [UInt8]) {
        self.generation = generation
        self.rowCount = rowCount
        self.digest = digest
        self.mac = mac
    }
}

/// A space's credentials, and its default choice when the default rule needs it.
///
/// The choice is always read: one that names no credential of the space is tampering (a row was
/// deleted outside credstore), whatever the number of credentials left.
package struct SealedSpace: Sendable {
    package var credentials: [SealedCredential]
    package var defaultChoice: SealedDefault?

    package init(credentials: [SealedCredential], defaultChoice: SealedDefault?) {
        self.credentials = credentials
        self.defaultChoice = defaultChoice
    }
}

/// Reads of the encrypted store. Implementations see only sealed values and blind indexes.
package protocol CredentialRepositoryReading {
    func header() throws -> (StoreHeader, [KeySlot])?
    /// The header's key generation alone: what a write checks, before it seals, to notice a
    /// rotation by another process; nil before the store exists.
    func keyGeneration() throws -> Int64?
    /// The credentials of a space and its default choice (always read, so that a dangling one
    /// is noticed), in one snapshot.
    func space(_ spaceIndex: BlindIndex) throws -> SealedSpace
    func credential(space spaceIndex: BlindIndex, user userIndex: BlindIndex) throws -> SealedCredential?
    func credentials(origin originIndex: BlindIndex) throws -> [SealedCredential]
    func defaultChoice(space spaceIndex: BlindIndex) throws -> SealedDefault?
    func defaultChoices(spaces spaceIndexes: Set<BlindIndex>) throws -> [BlindIndex: SealedDefault]
    func allCredentials() throws -> [SealedCredential]
    func allDefaultChoices() throws -> [SealedDefault]
    /// How many credential rows carry tag `tagIndex` (a label's or an attribute's blind index).
    func tagCount(_ tagIndex: BlindIndex) throws -> Int
    /// The keys of the credential rows that carry tag `tagIndex`: the rows of its seal-tree leaf.
    func credentialKeys(tagged tagIndex: BlindIndex) throws -> [(space: BlindIndex, user: BlindIndex)]
    /// The newest change-log entry's sequence number, and how many changes the log has held up to
    /// it (both 0 for an empty log).
    func changeLogPosition() throws -> (sequence: Int64, changeTotal: Int64)
    /// The change-log entries after `sequence`, oldest first: at most `limit` of them (all, for -1).
    func changes(after sequence: Int64, limit: Int) throws -> [SealedChangeEntry]
    /// The table seal; nil when its row is missing.
    func tableSeal() throws -> TableSeal?
    /// The seal tree's nodes among `ids` that exist (an absent node is an empty one), by id.
    func sealNodes(_ ids: [Int64]) throws -> [Int64: [UInt8]]
    /// Every node of the seal tree, by ascending id, streamed (the full check).
    func forEachSealNode(_ body: (_ id: Int64, _ body: [UInt8]) throws -> Void) throws
    /// ``space(_:)``, with the seal and the seal tree's node `nodeID` (the space's bucket), in one
    /// statement and so one snapshot: what a lookup needs to check its answer.
    func spaceWithSeal(_ spaceIndex: BlindIndex, nodeID: Int64) throws -> (space: SealedSpace, seal: TableSeal?, nodes: [Int64: [UInt8]])
    /// The seal and the seal tree's nodes among `ids`, in one statement.
    func sealWithNodes(_ ids: [Int64]) throws -> (seal: TableSeal?, nodes: [Int64: [UInt8]])
    /// Every sealed row's fingerprint in `tables`, streamed (the table seal's full check), with
    /// whether the row is one half of a synchronizable item: a credential row of the synchronizable
    /// tier, or a live (not deleted) sync register. The two halves must pair up, key for key.
    func forEachFingerprint(in tables: [SealedRowFingerprint.Table], _ body: (SealedRowFingerprint, _ synchronizableItem: Bool) throws -> Void) throws
    /// The synchronizable credential rows that have no live sync register, and the live sync
    /// registers that have no synchronizable credential row: each is tampering (or, before
    /// migration 0007, a credential stored synchronizable before sync existed).
    func unpairedSyncItems() throws -> (credentials: [SealedCredential], registers: [SealedSyncItem])

    // Sync
    func device() throws -> SealedDevice?
    func trustedDevice(keyIndex: BlindIndex) throws -> [UInt8]?
    func allTrustedDevices() throws -> [(keyIndex: BlindIndex, sealedPublicKey: [UInt8])]
    func syncClock() throws -> (wall: Int64, counter: Int64)?
    func syncItem(space spaceIndex: BlindIndex, user userIndex: BlindIndex) throws -> SealedSyncItem?
    func allSyncItems() throws -> [SealedSyncItem]
    func syncDefault(space spaceIndex: BlindIndex) throws -> SealedSyncDefault?
    func allSyncDefaults() throws -> [SealedSyncDefault]
    /// The kept versions of every user of a space: the rows of its seal-tree leaf.
    func keptVersions(space spaceIndex: BlindIndex) throws -> [SealedKeptVersion]
    func allKeptVersions() throws -> [SealedKeptVersion]
}

/// Writes, inside one transaction of ``SQLiteRepository/write(observer:_:afterCommit:)``.
package protocol CredentialRepositoryWriting: CredentialRepositoryReading {
    func initialize(header: StoreHeader, slots: [KeySlot]) throws
    func setTableSeal(_ seal: TableSeal) throws
    /// Writes a node of the seal tree; nil deletes it (an empty node is not stored).
    func setSealNode(_ id: Int64, body: [UInt8]?) throws
    /// Empties the seal tree (rekey and the migration that creates it build it again).
    func deleteAllSealNodes() throws
    func replaceSlots(_ slots: [KeySlot], header: StoreHeader) throws
    /// Writes a credential row, and replaces that row's tag rows with its ``SealedCredential/tagIndexes``.
    func upsert(_ credential: SealedCredential) throws
    /// Replaces the tag rows of the credential row (`spaceIndex`, `userIndex`) with `tagIndexes`
    /// (migration 0010 tags the rows written before it).
    func replaceTags(space spaceIndex: BlindIndex, user userIndex: BlindIndex, with tagIndexes: [BlindIndex]) throws
    /// Empties the credential, tag and default tables (rekey re-seals everything in the same transaction).
    func deleteAllCredentials() throws
    /// Deletes a credential row, its tag rows and its kept versions.
    func deleteCredential(space spaceIndex: BlindIndex, user userIndex: BlindIndex) throws
    func setDefaultChoice(_ choice: SealedDefault) throws
    func deleteDefaultChoice(space spaceIndex: BlindIndex) throws
    func setDevice(_ device: SealedDevice) throws
    func addTrustedDevice(keyIndex: BlindIndex, sealedPublicKey: [UInt8]) throws
    func removeTrustedDevice(keyIndex: BlindIndex) throws
    func setSyncClock(wall: Int64, counter: Int64) throws
    func upsertSyncItem(_ item: SealedSyncItem) throws
    /// Drops tombstones whose wall time is before `wall`.
    func deleteTombstones(before wall: Int64) throws
    func upsertSyncDefault(_ choice: SealedSyncDefault) throws
    /// Empties every table sealed under the root key's subkeys but the credentials (rekey).
    func deleteAllSyncState() throws
    /// Adds a kept version; one already kept for the same credential at the same time is replaced.
    func insertKeptVersion(_ version: SealedKeptVersion) throws
    /// Deletes one kept version.
    func deleteKeptVersion(space spaceIndex: BlindIndex, user userIndex: BlindIndex, kept: Int64) throws
    /// Drops the kept versions replaced before `kept` (milliseconds since 1970).
    func deleteKeptVersions(before kept: Int64) throws
    /// Empties the kept versions (rekey re-seals them in the same transaction).
    func deleteAllKeptVersions() throws
    /// Drops the change-log entries before the first one that holds a change after
    /// `changeTotal` or was written at or after `writtenSince` (milliseconds): the caller's
    /// retention. Never the newest entry.
    func pruneChangeLog(keepingChangesAfter changeTotal: Int64, writtenSince: Int64) throws
    /// Appends an entry to the change log under `sequence`, which holds the changes up to
    /// `changeTotal` (the caller continues both from ``CredentialRepositoryReading/changeLogPosition()``),
    /// written at `written` (milliseconds since 1970).
    func appendChange(sequence: Int64, writer: [UInt8], processID: Int32, written: Int64, changeTotal: Int64, sealedChanges: [UInt8]) throws
}

extension CredentialRepositoryReading {
    /// Every change-log entry after `sequence`, oldest first.
    package func changes(after sequence: Int64) throws -> [SealedChangeEntry] {
        try changes(after: sequence, limit: -1)
    }
}
