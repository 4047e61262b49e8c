/// A credential row as the database holds it: blind indexes, tier and timestamps in the clear;
/// the space, and the user with the password, sealed, each bound to all the clear columns.
struct SealedCredential: Hashable, Sendable {
    var spaceIndex: BlindIndex
    var userIndex: BlindIndex
    var originIndex: BlindIndex
    var persistence: Persistence
    var created: Int64
    var modified: Int64
    var sealedSpace: [UInt8]
    /// User and password together, so a lookup opens one ciphertext.
    var sealedCredential: [UInt8]
}

/// The default choice of one space: the chosen user's blind index and sealed name.
struct SealedDefault: Hashable, Sendable {
    var spaceIndex: BlindIndex
    var userIndex: BlindIndex
    var sealedUser: [UInt8]
}

/// One entry of the change log that lets other processes announce what this one committed.
struct SealedChangeEntry: Hashable, Sendable {
    var sequence: Int64
    /// The store instance that committed it.
    var writer: [UInt8]
    var processID: Int32
    /// The kind, tier, space and user of each change, in order, sealed together.
    var sealedChanges: [UInt8]
}

/// The sync state of one synchronizable item (live or tombstone), sealed; the flag and wall time
/// are clear for tombstone expiry and bound into the seal.
struct SealedSyncItem: Hashable, Sendable {
    var spaceIndex: BlindIndex
    var userIndex: BlindIndex
    var deleted: Bool
    var wall: Int64
    var sealedState: [UInt8]
}

/// The last-writer-wins default choice of one space, sealed.
struct SealedSyncDefault: Hashable, Sendable {
    var spaceIndex: BlindIndex
    var sealedState: [UInt8]
}

/// This store's device identity for sync; the secret signing key sealed.
struct SealedDevice: Hashable, Sendable {
    var deviceID: [UInt8]
    var publicKey: [UInt8]
    var sealedSecretKey: [UInt8]
}

/// The stored table seal (see migration 0004).
struct TableSeal: Hashable, Sendable {
    var generation: Int64
    var rowCount: Int64
    var digest: [UInt8]
    var mac: [UInt8]
}

/// A space's credentials, and its default choice when the default rule needs it.
///
/// The choice is always read: one that names no credential of the space is tampering (a row was
/// deleted outside credstore), whatever the number of credentials left.
struct SealedSpace: Sendable {
    var credentials: [SealedCredential]
    var defaultChoice: SealedDefault?
}

/// Reads of the encrypted store. Implementations see only sealed values and blind indexes.
protocol CredentialRepositoryReading {
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
    /// The newest change-log entry's sequence number, and how many changes the log has held up to
    /// it (both 0 for an empty log).
    func changeLogPosition() throws -> (sequence: Int64, changeTotal: Int64)
    /// The change-log entries after `sequence`, oldest first: at most `limit` of them (all, for -1).
    func changes(after sequence: Int64, limit: Int) throws -> [SealedChangeEntry]
    /// The table seal; nil when its row is missing.
    func tableSeal() throws -> TableSeal?
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
}

/// Writes, inside one transaction of ``CredentialRepository/write(_:)``.
protocol CredentialRepositoryWriting: CredentialRepositoryReading {
    func initialize(header: StoreHeader, slots: [KeySlot]) throws
    func setTableSeal(_ seal: TableSeal) throws
    func replaceSlots(_ slots: [KeySlot], header: StoreHeader) throws
    func upsert(_ credential: SealedCredential) throws
    /// Empties the credential and default tables (rekey re-seals everything in the same transaction).
    func deleteAllCredentials() throws
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
    /// Drops the change-log entries before the first one that holds a change after
    /// `changeTotal` or was written at or after `writtenSince` (milliseconds): the caller's
    /// retention. Never the newest entry.
    func pruneChangeLog(keepingChangesAfter changeTotal: Int64, writtenSince: Int64) throws
    /// Appends an entry to the change log under `sequence`, which holds the changes up to
    /// `changeTotal` (the caller continues both from ``CredentialRepositoryReading/changeLogPosition()``),
    /// written at `written` (milliseconds since 1970).
    func appendChange(sequence: Int64, writer: [UInt8], processID: Int32, written: Int64, changeTotal: Int64, sealedChanges: [UInt8]) throws
}

/// The encrypted store's persistence, kept behind a protocol so that the storage logic (tiers,
/// defaults, crypto) never sees SQL.
protocol CredentialRepository: Sendable {
    /// A consistent read.
    func read<T>(_ body: (any CredentialRepositoryReading) throws -> T) throws -> T
    /// One atomic transaction that holds the store's write lock across processes; `observer`
    /// hears of every sealed row it writes or deletes, and is asked before the commit. `afterCommit`
    /// runs once the transaction is durable, still serialized with other writes of this process,
    /// so that changes are announced in commit order.
    func write<T>(
        observer: any RowChangeObserver, _ body: (any CredentialRepositoryWriting) throws -> T, afterCommit: (T) -> Void
    ) throws -> T
    /// Runs `body` as ``write(observer:_:afterCommit:)`` would, holding the write lock, and then
    /// rolls the transaction back: nothing it wrote stays, and its result is returned.
    func writeRolledBack<T>(observer: any RowChangeObserver, _ body: (any CredentialRepositoryWriting) throws -> T) throws -> T
}

extension CredentialRepository {
    func write<T>(observer: any RowChangeObserver, _ body: (any CredentialRepositoryWriting) throws -> T) throws -> T {
        try write(observer: observer, body, afterCommit: { _ in })
    }
}

extension CredentialRepositoryReading {
    /// Every change-log entry after `sequence`, oldest first.
    func changes(after sequence: Int64) throws -> [SealedChangeEntry] {
        try changes(after: sequence, limit: -1)
    }
}
