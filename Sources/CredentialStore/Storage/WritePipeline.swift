import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

/// The one path every write of a store takes, composed here: the persistence layer runs the SQL
/// and reports each sealed row it writes or deletes to this pipeline (a ``RowChangeObserver``),
/// which
///
/// 1. folds each row, as it is reported, into the changes of the seal tree's leaves (XOR of keyed
///    hashes, see ``SealTree``), sends them into the tree's buckets in batches, and rewrites the
///    interior nodes and the seal once the write's own work is done (``foldSeal(into:)``);
/// 2. appends the write's disk-visible changes to the change log for other processes' watchers
///    (``appendChangeLog(_:writer:processID:into:)``), with the log's retention;
/// 3. decides whether the WAL must be emptied after the commit: when a credential row or a key
///    slot was deleted or overwritten (their old ciphertexts are in the WAL's earlier frames);
/// 4. refuses the commit when sealed rows changed and were not folded into the seal, so a write
///    path that forgot it fails in its tests rather than in a user's store.
///
/// `CredentialStorage.mutate` (every credential write, import, sync and tombstone expiry),
/// device trust, passphrase change, rekey, store creation and the migrations all write through a
/// pipeline. A dry run runs the same steps in a transaction that is then rolled back.
///
/// The sync registers of a local write are kept by a ``SyncRegisterKeeper`` (Sync/), told of the
/// credential rows and default choices the write changed; the registers' own rows reach the
/// seal through this pipeline like any other.
final class WritePipeline: RowChangeObserver {
    let storeID: [UInt8]
    /// The keys the seal is folded under: those of the store's current generation, which a write
    /// sets once it holds the lock (another process may have rotated them).
    var keys: StoreKeyring
    let clock: any StoreClock
    /// Told of every row change, when the write is a local one (an import's merge writes the
    /// remote registers itself).
    var syncRegisters: SyncRegisterKeeper?

    /// The changes to the seal tree's leaves since the last fold (rows removed and added), and to
    /// the row count.
    private var leafChanges: [SealTree.Leaf: SealTree.LeafState] = [:]
    private var rowCountChange: Int64 = 0
    private var unfolded = false
    /// The tree as this write has changed it so far: created by the first batch of leaf changes
    /// that goes into the buckets, finished by ``foldSeal(into:)``.
    private var treeUpdate: SealTree.Update?
    /// The seal the write started from, its MAC checked.
    private var baseSeal: TableSeal?
    /// The sync clock's newest reading, not yet folded in: the clock ticks once per item of an
    /// import, and each reading is removed again by the next, which folds to nothing.
    private var clockReading: SealedRowFingerprint?
    /// The sealed tables whose rows changed since the last fold (for the checks and the error).
    private(set) var changedTables: Set<SealedRowFingerprint.Table> = []
    private var retiredSecrets = false

    /// The newest seal generation known to be committed (the rollback anchor's, the instance's),
    /// read under the write lock, where no commit can be ahead of the store: the seal a write
    /// builds on must not be older (an older copy of the store put back under an open process).
    var generationFloor: (() -> Int64?)?

    init(keys: StoreKeyring, storeID: [UInt8], clock: any StoreClock) {
        self.keys = keys
        self.storeID = storeID
        self.clock = clock
    }

    // MARK: Row changes

    func rowRemoved(_ row: SealedRowFingerprint) {
        syncRegisters?.rowChanged(row, added: false)
        if row.table == .credentials || row.table == .keptVersions { retiredSecrets = true }
        unfolded = true
        changedTables.insert(row.table)
        if row.table == .syncClock, let reading = clockReading, reading == row {
            clockReading = nil
            return
        }
        fold(row, countChange: -1)
    }

    func rowAdded(_ row: SealedRowFingerprint) {
        syncRegisters?.rowChanged(row, added: true)
        unfolded = true
        changedTables.insert(row.table)
        if row.table == .syncClock {
            if let reading = clockReading { fold(reading, countChange: 1) }
            clockReading = row
            return
        }
        fold(row, countChange: 1)
    }

    func keySlotsRemoved() {
        retiredSecrets = true
    }

    func willCommit() throws {
        guard !unfolded else {
            let tables = changedTables.map { "\($0)" }.sorted().joined(separator: ", ")
            throw CredentialStorageError(.io,
                "a write changed sealed rows (\(tables)) without updating the table seal, and was rolled back; this is a bug in credstore, please report it")
        }
    }

    var emptiesLog: Bool { retiredSecrets }

    private func fold(_ row: SealedRowFingerprint, countChange: Int64) {
        for leaf in SealTree.leaves(of: row) {
            leafChanges[leaf, default: SealTree.LeafState()].fold(SealTree.contribution(row, to: leaf, keys: keys), countChange: countChange)
        }
        rowCountChange += countChange
    }

    /// Leaf changes held before they go into the tree's buckets: a write of a few rows holds a few;
    /// a large import sends them on in batches, so that what it holds stays bounded.
    static let leafChangeBatch = 8192

    /// Sends the leaf changes held so far into the tree's buckets when there are many of them.
    func flushIfLarge(into transaction: any CredentialRepositoryWriting) throws {
        guard leafChanges.count >= Self.leafChangeBatch else { return }
        try flushLeafChanges(into: transaction)
    }

    private func flushLeafChanges(into transaction: any CredentialRepositoryWriting) throws {
        guard !leafChanges.isEmpty else { return }
        if treeUpdate == nil {
            let seal = try currentSeal(transaction)
            baseSeal = seal
            treeUpdate = SealTree.Update(root: seal.digest)
        }
        try treeUpdate!.applyToBuckets(leafChanges, writer: transaction, keys: keys)
        leafChanges = [:]
    }

    // MARK: Steps

    /// Folds the rows changed since the last fold into the seal tree and the stored seal, one
    /// generation on, and returns the new generation; does nothing (nil) when no sealed row changed.
    @discardableResult
    func foldSeal(into transaction: any CredentialRepositoryWriting) throws -> Int64? {
        if let reading = clockReading {
            fold(reading, countChange: 1)
            clockReading = nil
        }
        guard unfolded else { return nil }
        try flushLeafChanges(into: transaction)
        let seal = try baseSeal ?? currentSeal(transaction)
        var update = treeUpdate ?? SealTree.Update(root: seal.digest)
        let root = try update.finish(writer: transaction, keys: keys)
        let generation = seal.generation + 1
        try transaction.setTableSeal(TableSealing.sealed(
            generation: generation, rowCount: seal.rowCount + rowCountChange, root: root, keys: keys, storeID: storeID))
        discardRowChanges()
        return generation
    }

    /// The stored seal, its MAC checked and its generation not below ``generationFloor``.
    func currentSeal(_ reader: any CredentialRepositoryReading) throws -> TableSeal {
        let seal = try TableSealing.stored(reader, keys: keys, storeID: storeID)
        try TableSealing.requireCurrent(seal.generation, floor: generationFloor?())
        return seal
    }

    /// Forgets the rows changed since the last fold, for a write that then seals every row afresh
    /// (rekey, the migrations that create a seal) or folds whole tables in (``TableSealing``).
    func discardRowChanges() {
        leafChanges = [:]
        rowCountChange = 0
        clockReading = nil
        unfolded = false
        changedTables = []
        treeUpdate = nil
        baseSeal = nil
    }

    // MARK: Change log

    /// Change-log entries younger than this are kept, however many: a watcher polls five times a
    /// second, and one transaction (an import) may log hundreds of entries at once.
    static let changeLogRetentionMillis: Int64 = 60_000
    /// The newest changes kept whatever their age, for watchers that were suspended a while.
    /// Counted in changes, not entries: an entry of an import holds up to 1,024.
    static let changeLogMinimumChanges: Int64 = 1000
    /// The most changes one change-log entry seals together. A transaction's changes take one
    /// entry, or several for a large import, so that a watcher never opens one huge blob at once.
    static let changeLogBatchSize = 1024

    /// The sequence numbers of the change-log entries this write appended; nil before the first.
    private(set) var loggedSequences: ClosedRange<Int64>?
    /// When this write appended its first change-log entry: none of its own entries is pruned.
    private var firstLogged: Int64?

    /// Appends `changes` (what other processes hear: only what changed on disk) to the change
    /// log, then drops what is past the retention. A large write calls it batch by batch as its
    /// changes come (``Mutation/log(_:_:_:_:)``), so they are not all held until the end.
    func appendChangeLog(
        _ changes: [CredentialChange], writer: [UInt8], processID: Int32, into transaction: any CredentialRepositoryWriting
    ) throws {
        guard !changes.isEmpty else { return }
        // Holding the write lock, this transaction's entries follow the newest one without gaps.
        // The changes are sealed together, a batch to an entry: one seal and one row for a `set`,
        // and not one per change for an import.
        var (sequence, changeTotal) = try transaction.changeLogPosition()
        let now = clock.now()
        let since = min(firstLogged ?? now, now)
        firstLogged = since
        for start in stride(from: changes.startIndex, to: changes.endIndex, by: Self.changeLogBatchSize) {
            sequence += 1
            loggedSequences = (loggedSequences?.lowerBound ?? sequence)...sequence
            let batch = changes[start..<min(start + Self.changeLogBatchSize, changes.endIndex)]
            changeTotal += Int64(batch.count)
            try transaction.appendChange(
                sequence: sequence, writer: writer, processID: processID, written: now, changeTotal: changeTotal,
                sealedChanges: keys.encryptChanges(batch, sequence: sequence, writer: writer, processID: processID))
        }
        try transaction.pruneChangeLog(
            keepingChangesAfter: changeTotal - Self.changeLogMinimumChanges, writtenSince: since - Self.changeLogRetentionMillis)
        // A large write logs batch by batch: its leaf changes go into the tree as often.
        try flushIfLarge(into: transaction)
    }

    // MARK: Coverage

    /// How a table of the schema is protected against deletion, editing and older copies of its
    /// rows. Every table the migrations create is listed in ``schemaCoverage``; a test compares
    /// the list with the live schema, so a new table or column cannot go in without a decision.
    enum Coverage {
        /// Every row is in the seal (this pipeline folds it in as it is written); each of
        /// `columns` is part of the row's fingerprint (key or clear value) or bound into the
        /// associated data of a ciphertext whose tag is.
        case sealed(SealedRowFingerprint.Table, columns: Set<String>)
        /// Outside the seal, for `reason`: derived from sealed data, authenticated otherwise, or
        /// unable to change any answer, merge or trust decision.
        case outside(reason: String)
    }

    static let schemaCoverage: [String: Coverage] = [
        "credentials": .sealed(.credentials, columns: [
            "space_index", "user_index", "origin_index", "persistence", "created", "modified", "sealed_space", "sealed_credential"]),
        "default_choices": .sealed(.defaultChoices, columns: ["space_index", "user_index", "sealed_user"]),
        "trusted_devices": .sealed(.trustedDevices, columns: ["key_index", "sealed_public_key"]),
        "sync_items": .sealed(.syncItems, columns: ["space_index", "user_index", "deleted", "wall", "sealed_state"]),
        "sync_defaults": .sealed(.syncDefaults, columns: ["space_index", "sealed_state"]),
        "device_identity": .sealed(.device, columns: ["id", "device_id", "public_key", "sealed_secret_key"]),
        "sync_clock": .sealed(.syncClock, columns: ["id", "wall", "counter"]),
        "credential_tags": .sealed(.credentialTags, columns: ["tag_index", "space_index", "user_index"]),
        "kept_versions": .sealed(.keptVersions, columns: ["space_index", "user_index", "kept", "sealed_version"]),
        "store_seal": .outside(reason:
            "the seal itself: its generation, count and the tree's root are under a keyed MAC with the store id; an older copy of it matches no other tree, and a whole-store rollback is the rollback anchor's"),
        "seal_nodes": .outside(reason:
            "the seal tree: each node's keyed hash is its slot in its parent, up to the root the seal's MAC covers; lookups and writes check the nodes they read, verify checks them all"),
        "store_header": .outside(reason:
            "format, store id and key generation are associated data of every key slot, so an edit or older copy fails the unwrap; `created` is shown nowhere and decides nothing"),
        "key_slots": .outside(reason:
            "each slot is authenticated by its commitment and AEAD under its own key-encryption key, bound to the header; an older slot wraps either the same root key (no answer changes) or a retired one (the rows do not open)"),
        "change_entries": .outside(reason:
            "derived: the change log only announces changes to watchers; each entry is sealed with its sequence number, writer and pid; no answer, merge or trust decision reads it"),
        "change_log": .outside(reason:
            "the change log before migration 0006, kept for a process of the previous version; nothing of this version reads it"),
        "schema_migrations": .outside(reason:
            "the migration history: a deleted, edited or foreign identifier makes opening fail (a migration re-run on an existing table, or an unknown step); it holds no data"),
    ]
}
