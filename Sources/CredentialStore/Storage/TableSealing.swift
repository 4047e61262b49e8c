import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

/// The table seal: a keyed MAC over the set of sealed rows, so that what row-level authentication
/// cannot see is detected too: a row deleted, an older copy of a row restored, a row copied in
/// from another store (whose rows, sealed under other keys, also fail on their own).
///
/// The set is summarised as the XOR of a keyed 16-byte hash of each row's fingerprint (its key
/// and the authentication tags of its ciphertexts). XOR makes the summary incremental, so a write
/// costs O(rows it touches): it folds out the hashes of the rows it removes or replaces and folds
/// in those it adds. Because the hashes are keyed, an attacker without the key cannot compute the
/// effect of any row on the summary, so no combination of old, deleted or foreign rows can be
/// made to cancel out (an XOR of *public* values could be solved for with linear algebra). The
/// stored summary, the row count and a generation counter are bound together under a keyed MAC.
///
/// Checking the seal means hashing every row's fingerprint: it runs when a store is opened and in
/// ``CredentialStorage/verify()``, and costs time linear in the number of rows (see
/// docs/reliability.md for the figures).
enum TableSealing {
    /// The migration that adds the seal's table.
    static let migration = "0004_table_seal"
    /// The migration after which the seal covers the sync state too (registers, defaults, device
    /// identity, clock).
    static let syncMigration = "0007_sync_state_sealed"
    static let digestBytes = 16

    static func tampered(_ detail: String) -> CredentialStorageError {
        CredentialStorageError(.tamperDetected,
            "the store's rows do not match its seal (\(detail)): a row was deleted, restored from an older copy or copied in from another store; restore the store from a backup")
    }

    /// A new store's seal: no rows, generation 0.
    static func empty(keys: StoreKeyring, storeID: [UInt8]) -> TableSeal {
        sealed(generation: 0, rowCount: 0, digest: [UInt8](repeating: 0, count: digestBytes), keys: keys, storeID: storeID)
    }

    /// The seal of the rows as they are now, over `tables` (all of them, unless a test stopped
    /// the migrations early).
    static func compute(
        _ reader: any CredentialRepositoryReading, keys: StoreKeyring, storeID: [UInt8], generation: Int64,
        tables: [SealedRowFingerprint.Table] = SealedRowFingerprint.Table.allCases
    ) throws -> TableSeal {
        try scan(reader, keys: keys, tables: tables).seal(generation: generation, keys: keys, storeID: storeID)
    }

    /// What one pass over the rows finds: the seal's digest and count, and whether the
    /// synchronizable credentials and the live sync registers pair up.
    private struct Scan {
        var digest = [UInt8](repeating: 0, count: TableSealing.digestBytes)
        var count: Int64 = 0
        /// XOR of the keys (space and user index) of the synchronizable credentials, and of the
        /// live registers.
        var synchronizableCredentials = [UInt8](repeating: 0, count: 32)
        var liveRegisters = [UInt8](repeating: 0, count: 32)
        var synchronizableCredentialCount = 0
        var liveRegisterCount = 0

        func seal(generation: Int64, keys: StoreKeyring, storeID: [UInt8]) -> TableSeal {
            TableSealing.sealed(generation: generation, rowCount: count, digest: digest, keys: keys, storeID: storeID)
        }
    }

    private static func scan(_ reader: any CredentialRepositoryReading, keys: StoreKeyring, tables: [SealedRowFingerprint.Table]) throws -> Scan {
        var scan = Scan()
        try reader.forEachFingerprint(in: tables) { fingerprint, synchronizableItem in
            xor(&scan.digest, contribution(fingerprint, keys: keys))
            scan.count += 1
            guard synchronizableItem else { return }
            // The keys themselves, unhashed: this compares two sets that the digest above already
            // authenticates, so someone without the key cannot make them differ unnoticed, and an
            // inconsistency written with the key (a bug, an older version) is not chosen to cancel
            // out. Only the count and the XOR are kept, however many items there are.
            if fingerprint.table == .credentials {
                fold(&scan.synchronizableCredentials, fingerprint.key)
                scan.synchronizableCredentialCount += 1
            } else {
                fold(&scan.liveRegisters, fingerprint.key)
                scan.liveRegisterCount += 1
            }
        }
        return scan
    }

    static func unpaired(_ detail: String) -> CredentialStorageError {
        CredentialStorageError(.tamperDetected,
            "the store's synchronizable credentials and their sync registers do not pair up (\(detail)): sync state was deleted or restored from an older copy; restore the store from a backup")
    }

    /// The stored seal, its MAC checked; `tamperDetected` when it is missing or forged.
    static func stored(_ reader: any CredentialRepositoryReading, keys: StoreKeyring, storeID: [UInt8]) throws -> TableSeal {
        guard let seal = try reader.tableSeal() else { throw tampered("the seal is missing") }
        let expected = mac(generation: seal.generation, rowCount: seal.rowCount, digest: seal.digest, keys: keys, storeID: storeID)
        guard seal.digest.count == digestBytes, Sodium.constantTimeEquals(seal.mac, expected) else {
            throw tampered("the seal does not authenticate")
        }
        return seal
    }

    /// Checks the stored seal against every row, and that every synchronizable credential has a
    /// live sync register and every live register a synchronizable credential; returns the seal.
    @discardableResult
    static func check(_ reader: any CredentialRepositoryReading, keys: StoreKeyring, storeID: [UInt8]) throws -> TableSeal {
        let seal = try stored(reader, keys: keys, storeID: storeID)
        let actual = try scan(reader, keys: keys, tables: SealedRowFingerprint.Table.allCases)
        guard actual.count == seal.rowCount else {
            throw tampered("\(seal.rowCount) rows sealed, \(actual.count) present")
        }
        guard Sodium.constantTimeEquals(actual.digest, seal.digest) else { throw tampered("the rows differ from those sealed") }
        // A sound seal over an unpaired state: only a writer with the keys could make it (a bug,
        // or a process of a version before migration 0007); a merge would read it wrongly all the same.
        guard actual.synchronizableCredentialCount == actual.liveRegisterCount,
              Sodium.constantTimeEquals(actual.synchronizableCredentials, actual.liveRegisters)
        else {
            throw unpaired("\(actual.synchronizableCredentialCount) synchronizable credentials, \(actual.liveRegisterCount) live registers")
        }
        return seal
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
            let tables = coversSync ? SealedRowFingerprint.Table.allCases : SealedRowFingerprint.Table.sinceTableSeal
            try writer.setTableSeal(compute(writer, keys: keys, storeID: storeID, generation: 0, tables: tables))
        } else if coversSync {
            try extend(writer, pipeline: pipeline, to: SealedRowFingerprint.Table.sinceSyncSeal)
        }
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
            seal = try stored(writer, keys: keys, storeID: storeID)
        } catch CredentialStorageError.Code.tamperDetected {
            return
        }
        var digest = seal.digest
        var count = seal.rowCount
        try writer.forEachFingerprint(in: tables) { fingerprint, _ in
            xor(&digest, contribution(fingerprint, keys: keys))
            count += 1
        }
        try writer.setTableSeal(sealed(generation: seal.generation + 1, rowCount: count, digest: digest, keys: keys, storeID: storeID))
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

    // MARK: Arithmetic

    static func contribution(_ fingerprint: SealedRowFingerprint, keys: StoreKeyring) -> [UInt8] {
        var message = [fingerprint.table.rawValue, UInt8(fingerprint.key.count)]
        message.reserveCapacity(2 + fingerprint.key.count + fingerprint.tags.count)
        message += fingerprint.key
        message += fingerprint.tags
        return keys.tableSealHash(message, outputBytes: digestBytes)
    }

    /// XORs `bytes` into `accumulator`, wrapping around.
    private static func fold(_ accumulator: inout [UInt8], _ bytes: [UInt8]) {
        for (offset, byte) in bytes.enumerated() { accumulator[offset % accumulator.count] ^= byte }
    }

    static func xor(_ digest: inout [UInt8], _ other: [UInt8]) {
        for index in 0..<digestBytes { digest[index] ^= other[index] }
    }

    static func sealed(generation: Int64, rowCount: Int64, digest: [UInt8], keys: StoreKeyring, storeID: [UInt8]) -> TableSeal {
        TableSeal(generation: generation, rowCount: rowCount, digest: digest,
                  mac: mac(generation: generation, rowCount: rowCount, digest: digest, keys: keys, storeID: storeID))
    }

    private static func mac(generation: Int64, rowCount: Int64, digest: [UInt8], keys: StoreKeyring, storeID: [UInt8]) -> [UInt8] {
        var message = ByteWriter(capacity: 96)
        message.append(raw: Array("credstore table seal".utf8))
        message.append(raw: storeID)
        message.append(generation)
        message.append(rowCount)
        message.append(raw: digest)
        return keys.tableSealHash(message.bytes, outputBytes: 32)
    }
}
