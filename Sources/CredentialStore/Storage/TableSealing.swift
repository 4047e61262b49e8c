import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

/// The table seal: a keyed MAC over the root of the ``SealTree``, with a generation counter (the
/// rollback anchor's) and the row count, so that what row-level authentication cannot see is
/// detected too: a row deleted, an older copy of a row restored, a row copied in from another
/// store (whose rows, sealed under other keys, also fail on their own).
///
/// Opening a store checks only the seal's MAC (and the anchor): O(1). Every lookup checks the
/// rows it read against the tree (``CredentialStorage`` and ``SealTree``), and
/// ``CredentialStorage/verify()`` checks every row (``check(_:keys:storeID:)``).
///
/// Before migration 0008 the seal was the XOR of a keyed hash of every row, which only a scan of
/// every row could check; ``Legacy`` keeps that check for the migration, which refuses to build a
/// tree over rows that do not match their old seal.
enum TableSealing {
    /// The migration that adds the seal's table.
    static let migration = "0004_table_seal"
    /// The migration after which the seal covers the sync state too (registers, defaults, device
    /// identity, clock).
    static let syncMigration = "0007_sync_state_sealed"
    /// The migration that makes the seal a tree (``SealTree``).
    static let treeMigration = "0008_seal_tree"
    /// The migration after which credentials carry details; its keyed step folds the git helper's
    /// companions (``GitCompanionFold``).
    static let detailsMigration = "0009_credential_details"
    /// The migration that adds the search tags; its keyed step tags every credential there is.
    static let tagsMigration = "0010_credential_tags"

    static func tampered(_ detail: String) -> CredentialStorageError {
        CredentialStorageError(.tamperDetected,
            "the store's rows do not match its seal (\(detail)): a row was deleted, restored from an older copy or copied in from another store; restore the store from a backup")
    }

    /// A new store's seal: no rows, an empty tree, generation 0.
    static func empty(keys: StoreKeyring, storeID: [UInt8]) -> TableSeal {
        sealed(generation: 0, rowCount: 0, root: SealTree.zeroDigest, keys: keys, storeID: storeID)
    }

    static func unpaired(_ detail: String) -> CredentialStorageError {
        CredentialStorageError(.tamperDetected,
            "the store's synchronizable credentials and their sync registers do not pair up (\(detail)): sync state was deleted or restored from an older copy; restore the store from a backup")
    }

    /// The stored seal, its MAC checked; `tamperDetected` when it is missing or forged.
    static func stored(_ reader: any CredentialRepositoryReading, keys: StoreKeyring, storeID: [UInt8]) throws -> TableSeal {
        try authenticated(reader.tableSeal(), keys: keys, storeID: storeID)
    }

    /// `tamperDetected` when a seal's generation is below `floor`: the newest generation known to
    /// have been committed (the rollback anchor's, or one this instance saw). An older seal is an
    /// older copy of the store put back, which a write must not build on and a read must not trust.
    static func requireCurrent(_ generation: Int64, floor: Int64?) throws {
        if let floor, generation < floor {
            throw tampered("the seal is at generation \(generation), but generation \(floor) was committed: the store was rolled back to an older copy")
        }
    }

    /// `seal`, once its MAC is checked.
    static func authenticated(_ seal: TableSeal?, keys: StoreKeyring, storeID: [UInt8]) throws -> TableSeal {
        guard let seal else { throw tampered("the seal is missing") }
        let expected = mac(label, generation: seal.generation, rowCount: seal.rowCount, digest: seal.digest, keys: keys, storeID: storeID)
        guard seal.digest.count == SealTree.digestBytes, Sodium.constantTimeEquals(seal.mac, expected) else {
            throw tampered("the seal does not authenticate")
        }
        return seal
    }

    /// Checks the stored seal against the whole tree and every row, and that every synchronizable
    /// credential has a live sync register and every live register a synchronizable credential;
    /// returns the seal.
    @discardableResult
    static func check(_ reader: any CredentialRepositoryReading, keys: StoreKeyring, storeID: [UInt8]) throws -> TableSeal {
        let seal = try stored(reader, keys: keys, storeID: storeID)
        let actual = try SealTree.checkEverything(reader, root: seal.digest, keys: keys)
        guard actual.count == seal.rowCount else {
            throw tampered("\(seal.rowCount) rows sealed, \(actual.count) present")
        }
        // A sound seal over an unpaired state: only a writer with the keys could make it (a bug,
        // or a process of a version before migration 0007); a merge would read it wrongly all the same.
        guard actual.synchronizableCredentialCount == actual.liveRegisterCount,
              Sodium.constantTimeEquals(actual.synchronizableCredentials, actual.liveRegisters)
        else {
            throw unpaired("\(actual.synchronizableCredentialCount) synchronizable credentials, \(actual.liveRegisterCount) live registers")
        }
        return seal
    }

    /// Seals every row there is afresh, one generation after `generation`: empties the tree and
    /// folds every row in (rekey, under its new keys; migration 0008, once the old seal checked).
    static func rebuild(_ writer: any CredentialRepositoryWriting, pipeline: WritePipeline, after generation: Int64) throws {
        pipeline.discardRowChanges()
        try writer.deleteAllSealNodes()
        try writer.setTableSeal(sealed(generation: generation, rowCount: 0, root: SealTree.zeroDigest, keys: pipeline.keys, storeID: pipeline.storeID))
        try writer.forEachFingerprint(in: SealedRowFingerprint.Table.allCases) { fingerprint, _ in
            pipeline.rowAdded(fingerprint)
            try pipeline.flushIfLarge(into: writer)
        }
        // With no row to fold, the fold writes nothing: the empty seal must still move one
        // generation on, as the caller records (a rekey of an empty store left generation 0 behind a
        // recorded 1, and every later open took it for a rollback).
        if try pipeline.foldSeal(into: writer) == nil {
            try writer.setTableSeal(sealed(generation: generation + 1, rowCount: 0, root: SealTree.zeroDigest, keys: pipeline.keys, storeID: pipeline.storeID))
        }
    }

    // MARK: Migrations

    /// What the migrations that involve the seal need done with the keys, in their transaction:
    /// 0004 seals the rows there are; 0007 brings the sync state under the existing seal.
    static func afterMigrating(
        _ applied: [String], _ writer: any CredentialRepositoryWriting, pipeline: WritePipeline
    ) throws {
        let (keys, storeID) = (pipeline.keys, pipeline.storeID)
        let coversSync = applied.contains(syncMigration)
        if coversSync { try pairLegacySyncItems(writer, keys: keys, clock: pipeline.clock) }
        if applied.contains(migration) {
            // No seal before: one over every row now there (all tables, or, for a test that
            // stopped before 0007, those 0004 covered).
            pipeline.discardRowChanges()
            let tables = coversSync ? SealedRowFingerprint.Table.legacySeal : SealedRowFingerprint.Table.sinceTableSeal
            try writer.setTableSeal(Legacy.compute(writer, keys: keys, storeID: storeID, generation: 0, tables: tables))
        } else if coversSync {
            try extend(writer, pipeline: pipeline, to: SealedRowFingerprint.Table.sinceSyncSeal)
        }
        if applied.contains(treeMigration) {
            // The rows must match the old seal before a tree is built over them: building it over
            // a row deleted or put back outside credstore would launder it.
            pipeline.discardRowChanges()
            let legacy = try Legacy.check(writer, keys: keys, storeID: storeID)
            // Consistent rows under an older seal are a rolled-back copy: the tree must not make
            // it current (the anchor is checked against the new seal only after the migration).
            try requireCurrent(legacy.generation, floor: pipeline.generationFloor?())
            try rebuild(writer, pipeline: pipeline, after: legacy.generation)
        }
        if applied.contains(detailsMigration) {
            // A write like any other, on the tree just built or found (its nodes are checked as read).
            try GitCompanionFold.run(writer, pipeline: pipeline)
        }
        if applied.contains(tagsMigration) {
            try tagEveryCredential(writer, pipeline: pipeline)
        }
    }

    /// Migration 0010's keyed step: each credential row gets the tag rows of its label and
    /// attributes (which only its sealed fields know), folded into the tree as any write's. A row
    /// that does not open is `tamperDetected`, and the migration rolls back.
    private static func tagEveryCredential(_ writer: any CredentialRepositoryWriting, pipeline: WritePipeline) throws {
        let keys = pipeline.keys
        for row in try writer.allCredentials() {
            let credential = try keys.decryptCredential(row)
            guard keys.userIndex(spaceIndex: row.spaceIndex, user: credential.user) == row.userIndex else { throw StoreKeyring.tampered }
            try writer.replaceTags(space: row.spaceIndex, user: row.userIndex, with: keys.tagIndexes(of: credential))
            try pipeline.flushIfLarge(into: writer)
        }
        try pipeline.foldSeal(into: writer)
    }

    /// Folds every row of `tables`, which the seal did not cover, into it, one generation on. It
    /// never recomputes the tables already covered, so rows deleted or restored there before the
    /// migration stay detected; a seal that does not authenticate is left as it is, for the check
    /// that follows to report.
    private static func extend(
        _ writer: any CredentialRepositoryWriting, pipeline: WritePipeline, to tables: [SealedRowFingerprint.Table]
    ) throws {
        let (keys, storeID) = (pipeline.keys, pipeline.storeID)
        // Whatever the repair wrote is in those tables, and is folded in whole below.
        precondition(pipeline.changedTables.isSubset(of: tables))
        pipeline.discardRowChanges()
        let seal: TableSeal
        do {
            seal = try Legacy.stored(writer, keys: keys, storeID: storeID)
        } catch CredentialStorageError.Code.tamperDetected {
            return
        }
        try requireCurrent(seal.generation, floor: pipeline.generationFloor?())
        var digest = seal.digest
        var count = seal.rowCount
        try writer.forEachFingerprint(in: tables) { fingerprint, _ in
            Legacy.xor(&digest, Legacy.contribution(fingerprint, keys: keys))
            count += 1
        }
        try writer.setTableSeal(Legacy.sealed(generation: seal.generation + 1, rowCount: count, digest: digest, keys: keys, storeID: storeID))
    }

    /// Before 0007 nothing checked that synchronizable credentials and live registers pair up,
    /// and a store used before sync existed (migration 0003) holds synchronizable credentials
    /// without any register. Once, when the seal starts to cover them: a credential without a
    /// live register gets one, with a fresh clock reading (it is this machine's current value,
    /// and is sent on the next export); a live register without its credential becomes a
    /// tombstone with its own reading, which deletes nothing newer anywhere.
    private static func pairLegacySyncItems(_ writer: any CredentialRepositoryWriting, keys: StoreKeyring, clock: any StoreClock) throws {
        let (credentials, registers) = try writer.unpairedSyncItems()
        let ledger = SyncLedger(transaction: writer, keys: keys, clock: clock)
        for row in credentials {
            let (space, credential) = try keys.decryptAll(row)
            try ledger.record(
                SyncItemState(space: space, user: credential.user, stamp: try ledger.tick(), deleted: false),
                spaceIndex: row.spaceIndex, userIndex: row.userIndex)
        }
        for register in registers {
            var state = try keys.decrypt(register)
            state.deleted = true
            try ledger.record(state, spaceIndex: register.spaceIndex, userIndex: register.userIndex)
        }
    }

    // MARK: The MAC

    /// The MAC's label since the tree; the seal before it had another (``Legacy``), so neither
    /// can pass for the other.
    private static let label = "credstore seal tree"

    static func sealed(generation: Int64, rowCount: Int64, root: [UInt8], keys: StoreKeyring, storeID: [UInt8]) -> TableSeal {
        TableSeal(generation: generation, rowCount: rowCount, digest: root,
                  mac: mac(label, generation: generation, rowCount: rowCount, digest: root, keys: keys, storeID: storeID))
    }

    /// Keyed BLAKE2b-256 over the label, the store id, the generation, the row count and the digest.
    fileprivate static func mac(
        _ label: String, generation: Int64, rowCount: Int64, digest: [UInt8], keys: StoreKeyring, storeID: [UInt8]
    ) -> [UInt8] {
        var message = ByteWriter(capacity: 96)
        message.append(raw: Array(label.utf8))
        message.append(raw: storeID)
        message.append(generation)
        message.append(rowCount)
        message.append(raw: digest)
        return keys.tableSealHash(message.bytes, outputBytes: 32)
    }

    /// The seal before migration 0008: the XOR of a keyed hash of every row's fingerprint, which
    /// only a scan of every row checks. Kept to seal and check a store on its way to the tree.
    enum Legacy {
        static let digestBytes = 16

        static func compute(
            _ reader: any CredentialRepositoryReading, keys: StoreKeyring, storeID: [UInt8], generation: Int64,
            tables: [SealedRowFingerprint.Table]
        ) throws -> TableSeal {
            var digest = [UInt8](repeating: 0, count: digestBytes)
            var count: Int64 = 0
            try reader.forEachFingerprint(in: tables) { fingerprint, _ in
                xor(&digest, contribution(fingerprint, keys: keys))
                count += 1
            }
            return sealed(generation: generation, rowCount: count, digest: digest, keys: keys, storeID: storeID)
        }

        static func stored(_ reader: any CredentialRepositoryReading, keys: StoreKeyring, storeID: [UInt8]) throws -> TableSeal {
            guard let seal = try reader.tableSeal() else { throw tampered("the seal is missing") }
            let expected = mac(generation: seal.generation, rowCount: seal.rowCount, digest: seal.digest, keys: keys, storeID: storeID)
            guard seal.digest.count == digestBytes, Sodium.constantTimeEquals(seal.mac, expected) else {
                throw tampered("the seal does not authenticate")
            }
            return seal
        }

        /// The stored seal against every row (the pairing of sync items is checked by the tree's
        /// full check, once the tree exists).
        static func check(_ reader: any CredentialRepositoryReading, keys: StoreKeyring, storeID: [UInt8]) throws -> TableSeal {
            let seal = try stored(reader, keys: keys, storeID: storeID)
            let actual = try compute(reader, keys: keys, storeID: storeID, generation: seal.generation,
                                     tables: SealedRowFingerprint.Table.legacySeal)
            guard actual.rowCount == seal.rowCount else {
                throw tampered("\(seal.rowCount) rows sealed, \(actual.rowCount) present")
            }
            guard Sodium.constantTimeEquals(actual.digest, seal.digest) else { throw tampered("the rows differ from those sealed") }
            return seal
        }

        static func contribution(_ fingerprint: SealedRowFingerprint, keys: StoreKeyring) -> [UInt8] {
            var message = [fingerprint.table.rawValue, UInt8(fingerprint.key.count)]
            message.reserveCapacity(2 + fingerprint.key.count + fingerprint.tags.count)
            message += fingerprint.key
            message += fingerprint.tags
            return keys.tableSealHash(message, outputBytes: digestBytes)
        }

        static func xor(_ digest: inout [UInt8], _ other: [UInt8]) {
            SealTree.xor(&digest, other)
        }

        private static let label = "credstore table seal"

        static func sealed(generation: Int64, rowCount: Int64, digest: [UInt8], keys: StoreKeyring, storeID: [UInt8]) -> TableSeal {
            TableSeal(generation: generation, rowCount: rowCount, digest: digest,
                      mac: mac(generation: generation, rowCount: rowCount, digest: digest, keys: keys, storeID: storeID))
        }

        private static func mac(generation: Int64, rowCount: Int64, digest: [UInt8], keys: StoreKeyring, storeID: [UInt8]) -> [UInt8] {
            TableSealing.mac(label, generation: generation, rowCount: rowCount, digest: digest, keys: keys, storeID: storeID)
        }
    }
}
