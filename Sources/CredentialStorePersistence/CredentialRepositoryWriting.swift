package import CredentialStoreCrypto

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
