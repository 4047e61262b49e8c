package import CredentialStoreCrypto

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

extension CredentialRepositoryReading {
    /// Every change-log entry after `sequence`, oldest first.
    package func changes(after sequence: Int64) throws -> [SealedChangeEntry] {
        try changes(after: sequence, limit: -1)
    }
}
