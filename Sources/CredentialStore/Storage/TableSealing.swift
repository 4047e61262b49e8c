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

    /// Folds what the transaction removed and added into the stored seal, one generation on, and
    /// returns the new generation; does nothing (nil) when the transaction touched no sealed row.
    @discardableResult
    static func fold(_ transaction: any CredentialRepositoryWriting, keys: StoreKeyring, storeID: [UInt8]) throws -> Int64? {
        let changes = transaction.takeRowChanges()
        guard !changes.removed.isEmpty || !changes.added.isEmpty else { return nil }
        let seal = try stored(transaction, keys: keys, storeID: storeID)
        var digest = seal.digest
        for fingerprint in changes.removed + changes.added {
            xor(&digest, contribution(fingerprint, keys: keys))
        }
        let count = seal.rowCount - Int64(changes.removed.count) + Int64(changes.added.count)
        try transaction.setTableSeal(sealed(generation: seal.generation + 1, rowCount: count, digest: digest, keys: keys, storeID: storeID))
        return seal.generation + 1
    }

    // MARK: Migrations

    /// What the migrations that involve the seal need done with the keys, in their transaction:
    /// 0004 seals the rows there are; 0007 brings the sync state under the existing seal.
    static func afterMigrating(_ applied: [String], _ writer: any CredentialRepositoryWriting, keys: StoreKeyring, storeID: [UInt8]) throws {
        let coversSync = applied.contains(syncMigration)
        if coversSync { try pairLegacySyncItems(writer, keys: keys) }
        if applied.contains(migration) {
            // No seal before: one over every row now there (all tables, or, for a test that
            // stopped before 0007, those 0004 covered).
            _ = writer.takeRowChanges()
            let tables = coversSync ? SealedRowFingerprint.Table.allCases : SealedRowFingerprint.Table.sinceTableSeal
            try writer.setTableSeal(compute(writer, keys: keys, storeID: storeID, generation: 0, tables: tables))
        } else if coversSync {
            try extend(writer, keys: keys, storeID: storeID, to: SealedRowFingerprint.Table.sinceSyncSeal)
        }
    }

    /// Folds every row of `tables`, which the seal did not cover, into it, one generation on. It
    /// never recomputes the tables already covered, so rows deleted or restored there before the
    /// migration stay detected; a seal that does not authenticate is left as it is, for the check
    /// that follows to report.
    private static func extend(
        _ writer: any CredentialRepositoryWriting, keys: StoreKeyring, storeID: [UInt8], to tables: [SealedRowFingerprint.Table]
    ) throws {
        // Whatever the repair wrote is in those tables, and is folded in whole below.
        let repaired = writer.takeRowChanges()
        precondition((repaired.removed + repaired.added).allSatisfy { tables.contains($0.table) })
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
    private static func pairLegacySyncItems(_ writer: any CredentialRepositoryWriting, keys: StoreKeyring) throws {
        let (credentials, registers) = try writer.unpairedSyncItems()
        let ledger = SyncLedger(transaction: writer, keys: keys)
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

    // MARK: Coverage

    /// How a table of the schema is protected against deletion, editing and older copies of its
    /// rows. Every table the migrations create is listed in ``schemaCoverage``; a test compares
    /// the list with the live schema, so a new table or column cannot go in without a decision.
    enum Coverage {
        /// Every row is in the seal; each of `columns` is part of the row's fingerprint (key or
        /// clear value) or bound into the associated data of a ciphertext whose tag is.
        case sealed(SealedRowFingerprint.Table, columns: Set<String>)
        /// Outside the seal, for `reason`: authenticated otherwise, or unable to change any
        /// answer, merge or trust decision.
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
        "table_seal": .outside(reason:
            "the seal itself: its generation, count and digest are under a keyed MAC with the store id; an older copy of it matches no other set of rows, and a whole-store rollback is the rollback anchor's"),
        "store_header": .outside(reason:
            "format, store id and key generation are associated data of every key slot, so an edit or older copy fails the unwrap; `created` is shown nowhere and decides nothing"),
        "key_slots": .outside(reason:
            "each slot is authenticated by its commitment and AEAD under its own key-encryption key, bound to the header; an older slot wraps either the same root key (no answer changes) or a retired one (the rows do not open)"),
        "change_entries": .outside(reason:
            "the change log only announces changes to watchers; each entry is sealed with its sequence number, writer and pid; no answer, merge or trust decision reads it"),
        "change_log": .outside(reason:
            "the change log before migration 0006, kept for a process of the previous version; nothing of this version reads it"),
        "schema_migrations": .outside(reason:
            "the migration history: a deleted, edited or foreign identifier makes opening fail (a migration re-run on an existing table, or an unknown step); it holds no data"),
    ]

    // MARK: Arithmetic

    private static func contribution(_ fingerprint: SealedRowFingerprint, keys: StoreKeyring) -> [UInt8] {
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

    fileprivate static func xor(_ digest: inout [UInt8], _ other: [UInt8]) {
        for index in 0..<digestBytes { digest[index] ^= other[index] }
    }

    fileprivate static func sealed(generation: Int64, rowCount: Int64, digest: [UInt8], keys: StoreKeyring, storeID: [UInt8]) -> TableSeal {
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

extension SealedRowFingerprint {
    /// The tag of a sealed field: its last bytes (nonce ‖ ciphertext ‖ tag).
    private static func tag(_ sealed: [UInt8]) -> [UInt8] { Array(sealed.suffix(Sodium.aeadTagBytes)) }

    init(_ row: SealedCredential) {
        self.init(table: .credentials, key: row.spaceIndex.bytes + row.userIndex.bytes,
                  tags: Self.tag(row.sealedSpace) + Self.tag(row.sealedCredential))
    }

    init(_ choice: SealedDefault) {
        self.init(table: .defaultChoices, key: choice.spaceIndex.bytes + choice.userIndex.bytes, tags: Self.tag(choice.sealedUser))
    }

    init(trustedKeyIndex: BlindIndex, sealedPublicKey: [UInt8]) {
        self.init(table: .trustedDevices, key: trustedKeyIndex.bytes, tags: Self.tag(sealedPublicKey))
    }

    /// With its clear columns as `SQLiteAccess` reads integers (8 bytes, big-endian).
    init(_ item: SealedSyncItem) {
        self.init(table: .syncItems, key: item.spaceIndex.bytes + item.userIndex.bytes,
                  tags: Self.tag(item.sealedState) + Self.bigEndian(item.deleted ? 1 : 0) + Self.bigEndian(item.wall))
    }

    init(_ choice: SealedSyncDefault) {
        self.init(table: .syncDefaults, key: choice.spaceIndex.bytes, tags: Self.tag(choice.sealedState))
    }

    init(_ device: SealedDevice) {
        self.init(table: .device, key: [], tags: device.deviceID + device.publicKey + Self.tag(device.sealedSecretKey))
    }

    /// The clock has no ciphertext: its reading.
    init(syncClockWall wall: Int64, counter: Int64) {
        self.init(table: .syncClock, key: [], tags: Self.bigEndian(wall) + Self.bigEndian(counter))
    }

    /// An integer column as `SQLiteAccess` puts it in a fingerprint.
    private static func bigEndian(_ value: Int64) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }
}
