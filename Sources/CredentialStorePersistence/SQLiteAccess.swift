import CredentialStoreCore
package import CredentialStoreCrypto
import Foundation
package import GRDB

/// The SQL of the store, over one connection inside a read or a write.
package struct SQLiteAccess: CredentialRepositoryWriting {
    package let db: Database
    /// Told of each sealed row a write removes and adds; reads have none.
    package var observer: (any RowChangeObserver)?
    /// The connection's statements of the hot paths; without them, GRDB's cache serves.
    package var prepared: PreparedStatements?

    package init(db: Database, observer: (any RowChangeObserver)? = nil, prepared: PreparedStatements? = nil) {
        self.db = db
        self.observer = observer
        self.prepared = prepared
    }

    private func statement(_ key: PreparedStatements.Key) throws -> Statement {
        guard let prepared else { return try db.cachedStatement(sql: key.sql) }
        return try prepared.statement(key, in: db)
    }

    private static let credentialColumns = """
        space_index, user_index, origin_index, persistence, created, modified, sealed_space, sealed_credential
        """

    // The statements an import runs per row, spelled once: GRDB's statement cache is keyed by the
    // SQL text, and building it anew for each of a hundred thousand rows shows in a profile.
    /// A space's credential rows, then its default choice as a row whose `origin_index` is NULL
    /// (a credential row's never is: the column is NOT NULL).
    static let spaceSQL = """
        SELECT \(credentialColumns) FROM credentials WHERE space_index = ?1
        UNION ALL
        SELECT space_index, user_index, NULL, NULL, NULL, NULL, sealed_user, NULL FROM default_choices WHERE space_index = ?1
        """
    static let credentialByKeySQL = "SELECT \(credentialColumns) FROM credentials WHERE space_index = ? AND user_index = ?"
    static let insertCredentialSQL = "INSERT INTO credentials (\(credentialColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
    static let replaceCredentialSQL = "INSERT OR REPLACE INTO credentials (\(credentialColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    private static let syncItemColumns = "space_index, user_index, deleted, wall, sealed_state"
    static let syncItemByKeySQL = "SELECT \(syncItemColumns) FROM sync_items WHERE space_index = ? AND user_index = ?"
    private static let upsertSyncItemSQL = "INSERT OR REPLACE INTO sync_items (\(syncItemColumns)) VALUES (?, ?, ?, ?, ?)"
    private static let insertSyncItemSQL = "INSERT INTO sync_items (\(syncItemColumns)) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"

    // MARK: Reading

    package func header() throws -> (StoreHeader, [KeySlot])? {
        guard try db.hasTable("store_header") else { return nil }
        var header: StoreHeader?
        try db.cachedStatement(sql: "SELECT format, store_id, key_generation, created FROM store_header WHERE id = 1")
            .forEachRawRow(values: []) { row in
                guard let format = row.integer(0), let storeID = row.blob(1), let generation = row.integer(2), let created = row.integer(3)
                else { return }
                header = StoreHeader(format: Int(format), storeID: storeID, keyGeneration: generation, created: created)
            }
        guard let header else {
            throw CredentialStorageError(.corrupt, "the store's header is missing or damaged; restore the store from a backup")
        }
        var slots: [KeySlot] = []
        try db.cachedStatement(sql: """
            SELECT kind, kdf_salt, kdf_opslimit, kdf_memlimit, commitment, wrapped_root_key FROM key_slots
            """).forEachRawRow(values: []) { row in
            guard let kindName = row.text(0), let kind = StoreProtection(slotName: kindName),
                  let commitment = row.blob(4), let wrapped = row.blob(5)
            else {
                throw CredentialStorageError(.corrupt, "a key slot of the store is damaged; restore the store from a backup")
            }
            var cost: Sodium.PasswordHashCost?
            if let ops = row.integer(2), let mem = row.integer(3) {
                cost = Sodium.PasswordHashCost(opsLimit: UInt64(clamping: ops), memLimit: Int(clamping: mem))
            }
            slots.append(KeySlot(kind: kind, salt: row.blob(1), cost: cost, commitment: commitment, wrappedRootKey: wrapped))
        }
        return (header, slots)
    }

    /// The schema as `sqlite_master` holds it, digested, and the newest migration recorded: what
    /// opening compares with the schema the migrations build (``StoreSchema``).
    package func schemaState() throws -> StoreSchema.State {
        let digest = try schemaDigest()
        var newest: String?
        if try db.hasTable("schema_migrations") {
            try db.cachedStatement(sql: "SELECT max(identifier) FROM schema_migrations").forEachRawRow(values: []) { newest = $0.text(0) }
        }
        return StoreSchema.State(digest: digest, newestMigration: newest)
    }

    /// The digest of `sqlite_master` (see ``StoreSchema``), hashed straight from SQLite's buffers:
    /// this runs on every open, `credstore get` included.
    package func schemaDigest() throws -> [UInt8] {
        let statement = try db.cachedStatement(sql: "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
        return try StoreSchema.digest { add in
            try statement.forEachRawRow(values: []) { row in
                for column in Int32(0)..<4 { add(row.textBytes(column)) }
            }
        }
    }

    package func keyGeneration() throws -> Int64? {
        var generation: Int64?
        try statement(.keyGeneration).forEachRawRow(values: []) { generation = $0.integer(0) }
        return generation
    }

    package func space(_ spaceIndex: BlindIndex) throws -> SealedSpace {
        // The rows and, always, the default choice: a choice
        // naming a row that is gone is the trace of a deleted credential, and only a read of the
        // choice can notice it (a space with one row left would otherwise answer with that row).
        // One statement, not two: one read transaction (its locks are most of a lookup's system
        // calls), and one snapshot, so another writer's commit cannot fall between the two.
        let statement = try self.statement(.space)
        var result = SealedSpace(credentials: [], defaultChoice: nil)
        try statement.forEachRawRow(binding: [spaceIndex]) { row in
            if row.isNull(2) {
                guard let user = row.blob(1), let sealed = row.blob(6) else { throw Self.damagedRow }
                result.defaultChoice = SealedDefault(spaceIndex: spaceIndex, userIndex: BlindIndex(user), sealedUser: sealed)
            } else {
                result.credentials.append(try Self.credential(row))
            }
        }
        return result
    }

    package func credential(space spaceIndex: BlindIndex, user userIndex: BlindIndex) throws -> SealedCredential? {
        let statement = try self.statement(.credentialByKey)
        var result: SealedCredential?
        try statement.forEachRawRow(binding: [spaceIndex, userIndex]) { result = try Self.credential($0) }
        return result
    }

    package func credentials(origin originIndex: BlindIndex) throws -> [SealedCredential] {
        let statement = try db.cachedStatement(sql: "SELECT \(Self.credentialColumns) FROM credentials WHERE origin_index = ?")
        return try Row.fetchAll(statement, arguments: [Data(originIndex)]).map(Self.credential)
    }

    package func defaultChoice(space spaceIndex: BlindIndex) throws -> SealedDefault? {
        let statement = try self.statement(.defaultChoice)
        var result: SealedDefault?
        try statement.forEachRawRow(binding: [spaceIndex]) { row in
            guard let user = row.blob(0), let sealed = row.blob(1) else { throw Self.damagedRow }
            result = SealedDefault(spaceIndex: spaceIndex, userIndex: BlindIndex(user), sealedUser: sealed)
        }
        return result
    }

    package func defaultChoices(spaces spaceIndexes: Set<BlindIndex>) throws -> [BlindIndex: SealedDefault] {
        var result: [BlindIndex: SealedDefault] = [:]
        for spaceIndex in spaceIndexes {
            result[spaceIndex] = try defaultChoice(space: spaceIndex)
        }
        return result
    }

    package func allCredentials() throws -> [SealedCredential] {
        try Row.fetchAll(db, sql: "SELECT \(Self.credentialColumns) FROM credentials").map(Self.credential)
    }

    package func allDefaultChoices() throws -> [SealedDefault] {
        try Row.fetchAll(db, sql: "SELECT space_index, user_index, sealed_user FROM default_choices").map { row in
            guard let space = row[0] as Data? else { throw Self.damagedRow }
            return try Self.defaultChoice(spaceIndex: BlindIndex(space), row[1], row[2])
        }
    }

    package func changeLogPosition() throws -> (sequence: Int64, changeTotal: Int64) {
        var position: (sequence: Int64, changeTotal: Int64) = (0, 0)
        try statement(.changeLogPosition).forEachRawRow(values: []) { position = ($0.int64(0), $0.int64(1)) }
        return position
    }

    package func changes(after sequence: Int64, limit: Int) throws -> [SealedChangeEntry] {
        let statement = try db.cachedStatement(sql: """
            SELECT seq, writer, pid, sealed_changes FROM change_entries WHERE seq > ? ORDER BY seq LIMIT ?
            """)
        var entries: [SealedChangeEntry] = []
        try statement.forEachRawRow(values: [.integer(sequence), .integer(Int64(limit))]) { row in
            guard let writer = row.blob(1), let sealed = row.blob(3) else { throw Self.damagedRow }
            entries.append(SealedChangeEntry(
                sequence: row.int64(0), writer: writer, processID: Int32(truncatingIfNeeded: row.int64(2)), sealedChanges: sealed))
        }
        return entries
    }

    // MARK: Sync

    package func device() throws -> SealedDevice? {
        var result: SealedDevice?
        try db.cachedStatement(sql: "SELECT device_id, public_key, sealed_secret_key FROM device_identity WHERE id = 1").forEachRawRow(binding: []) { row in
            guard let id = row.blob(0), let key = row.blob(1), let secret = row.blob(2) else { throw Self.damagedRow }
            result = SealedDevice(deviceID: id, publicKey: key, sealedSecretKey: secret)
        }
        return result
    }

    package func trustedDevice(keyIndex: BlindIndex) throws -> [UInt8]? {
        var result: [UInt8]?
        try db.cachedStatement(sql: "SELECT sealed_public_key FROM trusted_devices WHERE key_index = ?").forEachRawRow(binding: [keyIndex]) { row in
            result = row.blob(0)
        }
        return result
    }

    package func allTrustedDevices() throws -> [(keyIndex: BlindIndex, sealedPublicKey: [UInt8])] {
        var result: [(keyIndex: BlindIndex, sealedPublicKey: [UInt8])] = []
        try db.cachedStatement(sql: "SELECT key_index, sealed_public_key FROM trusted_devices").forEachRawRow(binding: []) { row in
            guard let index = row.blob(0), let sealed = row.blob(1) else { throw Self.damagedRow }
            result.append((BlindIndex(index), sealed))
        }
        return result
    }

    package func syncClock() throws -> (wall: Int64, counter: Int64)? {
        var result: (wall: Int64, counter: Int64)?
        try db.cachedStatement(sql: "SELECT wall, counter FROM sync_clock WHERE id = 1").forEachRawRow(binding: []) { row in
            result = (row.int64(0), row.int64(1))
        }
        return result
    }

    private static func syncItem(_ row: RawRow) throws -> SealedSyncItem {
        // The flag is 0 or 1: any other value would read as one of them and pass authentication.
        guard let space = row.blob(0), let user = row.blob(1), let sealed = row.blob(4), let deleted = row.integer(2), deleted == 0 || deleted == 1
        else { throw damagedRow }
        return SealedSyncItem(spaceIndex: BlindIndex(space), userIndex: BlindIndex(user), deleted: row.int64(2) != 0, wall: row.int64(3), sealedState: sealed)
    }

    package func syncItem(space spaceIndex: BlindIndex, user userIndex: BlindIndex) throws -> SealedSyncItem? {
        var result: SealedSyncItem?
        try statement(.syncItemByKey).forEachRawRow(binding: [spaceIndex, userIndex]) { result = try Self.syncItem($0) }
        return result
    }

    package func allSyncItems() throws -> [SealedSyncItem] {
        var result: [SealedSyncItem] = []
        try db.cachedStatement(sql: "SELECT \(Self.syncItemColumns) FROM sync_items").forEachRawRow(binding: []) { result.append(try Self.syncItem($0)) }
        return result
    }

    package func syncDefault(space spaceIndex: BlindIndex) throws -> SealedSyncDefault? {
        var result: SealedSyncDefault?
        try db.cachedStatement(sql: "SELECT sealed_state FROM sync_defaults WHERE space_index = ?").forEachRawRow(binding: [spaceIndex]) { row in
            guard let sealed = row.blob(0) else { throw Self.damagedRow }
            result = SealedSyncDefault(spaceIndex: spaceIndex, sealedState: sealed)
        }
        return result
    }

    package func allSyncDefaults() throws -> [SealedSyncDefault] {
        var result: [SealedSyncDefault] = []
        try db.cachedStatement(sql: "SELECT space_index, sealed_state FROM sync_defaults").forEachRawRow(binding: []) { row in
            guard let space = row.blob(0), let sealed = row.blob(1) else { throw Self.damagedRow }
            result.append(SealedSyncDefault(spaceIndex: BlindIndex(space), sealedState: sealed))
        }
        return result
    }

    package func setDevice(_ device: SealedDevice) throws {
        if let observer {
            if let old = try fingerprint(.device, []) { observer.rowRemoved(old) }
            observer.rowAdded(SealedRowFingerprint(device))
        }
        try db.execute(
            sql: "INSERT OR REPLACE INTO device_identity (id, device_id, public_key, sealed_secret_key) VALUES (1, ?, ?, ?)",
            arguments: [Data(device.deviceID), Data(device.publicKey), Data(device.sealedSecretKey)])
    }

    package func addTrustedDevice(keyIndex: BlindIndex, sealedPublicKey: [UInt8]) throws {
        if let observer {
            if let old = try fingerprint(.trustedDevices, [keyIndex]) { observer.rowRemoved(old) }
            observer.rowAdded(SealedRowFingerprint(trustedKeyIndex: keyIndex, sealedPublicKey: sealedPublicKey))
        }
        try db.execute(
            sql: "INSERT OR REPLACE INTO trusted_devices (key_index, sealed_public_key) VALUES (?, ?)",
            arguments: [Data(keyIndex), Data(sealedPublicKey)])
    }

    package func removeTrustedDevice(keyIndex: BlindIndex) throws {
        if let observer, let old = try fingerprint(.trustedDevices, [keyIndex]) { observer.rowRemoved(old) }
        try db.execute(sql: "DELETE FROM trusted_devices WHERE key_index = ?", arguments: [Data(keyIndex)])
    }

    package func setSyncClock(wall: Int64, counter: Int64) throws {
        if let observer {
            if let old = try fingerprint(.syncClock, []) { observer.rowRemoved(old) }
            observer.rowAdded(SealedRowFingerprint(syncClockWall: wall, counter: counter))
        }
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO sync_clock (id, wall, counter) VALUES (1, ?, ?)")
            .executeRaw([.integer(wall), .integer(counter)])
    }

    package func upsertSyncItem(_ item: SealedSyncItem) throws {
        let values: [RawValue] = [.blob(item.spaceIndex), .blob(item.userIndex), .integer(item.deleted ? 1 : 0), .integer(item.wall), .blob(item.sealedState)]
        // As in `upsert(_:)`: a new register goes straight in; one that is there is read, for the
        // seal to fold it out, and replaced.
        try db.cachedStatement(sql: Self.insertSyncItemSQL).executeRaw(values)
        if db.changesCount == 0 {
            if let observer, let old = try fingerprint(.syncItems, [item.spaceIndex, item.userIndex]) { observer.rowRemoved(old) }
            try db.cachedStatement(sql: Self.upsertSyncItemSQL).executeRaw(values)
        }
        observer?.rowAdded(SealedRowFingerprint(item))
    }

    package func deleteTombstones(before wall: Int64) throws {
        // RETURNING hands back what the scan deletes, so the seal folds it out without a second scan.
        let shape = Self.fingerprintSQL(.syncItems)
        try db.cachedStatement(sql: "DELETE FROM sync_items WHERE deleted = 1 AND wall < ? RETURNING \(shape.columns)")
            .forEachRawRow(values: [.integer(wall)]) { row in
                observer?.rowRemoved(Self.fingerprint(.syncItems, row))
            }
    }

    package func upsertSyncDefault(_ choice: SealedSyncDefault) throws {
        let values: [RawValue] = [.blob(choice.spaceIndex), .blob(choice.sealedState)]
        try db.cachedStatement(sql: "INSERT INTO sync_defaults (space_index, sealed_state) VALUES (?, ?) ON CONFLICT DO NOTHING").executeRaw(values)
        if db.changesCount == 0 {
            if let observer, let old = try fingerprint(.syncDefaults, [choice.spaceIndex]) { observer.rowRemoved(old) }
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO sync_defaults (space_index, sealed_state) VALUES (?, ?)").executeRaw(values)
        }
        observer?.rowAdded(SealedRowFingerprint(choice))
    }

    package func deleteAllSyncState() throws {
        if let observer {
            try forEachFingerprint(in: [.trustedDevices] + SealedRowFingerprint.Table.sinceSyncSeal.filter { $0 != .syncClock }) { fingerprint, _ in
                observer.rowRemoved(fingerprint)
            }
        }
        try db.execute(sql: "DELETE FROM sync_items; DELETE FROM sync_defaults; DELETE FROM trusted_devices; DELETE FROM device_identity")
    }

    // MARK: Writing

    package func initialize(header: StoreHeader, slots: [KeySlot]) throws {
        try db.execute(
            sql: "INSERT INTO store_header (id, format, store_id, key_generation, created) VALUES (1, ?, ?, ?, ?)",
            arguments: [header.format, Data(header.storeID), header.keyGeneration, header.created])
        try replaceSlots(slots, header: header)
    }

    package func replaceSlots(_ slots: [KeySlot], header: StoreHeader) throws {
        try db.execute(sql: "UPDATE store_header SET key_generation = ? WHERE id = 1", arguments: [header.keyGeneration])
        try db.execute(sql: "DELETE FROM key_slots")
        // An old slot wraps the root key under the old passphrase or key file (passwd, rekey).
        if db.changesCount > 0 { observer?.keySlotsRemoved() }
        for slot in slots {
            try db.execute(sql: """
                INSERT INTO key_slots (kind, kdf_salt, kdf_opslimit, kdf_memlimit, commitment, wrapped_root_key)
                VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [
                    slot.kind.slotName, slot.salt.map { Data($0) },
                    slot.cost.map { Int64(clamping: $0.opsLimit) }, slot.cost.map { Int64($0.memLimit) },
                    Data(slot.commitment), Data(slot.wrappedRootKey),
                ])
        }
    }

    package func upsert(_ credential: SealedCredential) throws {
        let values: [RawValue] = [
            .blob(credential.spaceIndex), .blob(credential.userIndex), .blob(credential.originIndex),
            .integer(Int64(credential.persistence.storedCode)), .integer(credential.created), .integer(credential.modified),
            .blob(credential.sealedSpace), .blob(credential.sealedCredential),
        ]
        // A new row goes straight in. Only when one is there already is it read, for the seal to
        // fold its fingerprint out, and replaced: an import of new rows saves a lookup per row.
        try statement(.insertCredential).executeRaw(values)
        if db.changesCount == 0 {
            if let observer, let old = try fingerprint(.credentials, [credential.spaceIndex, credential.userIndex]) {
                observer.rowRemoved(old)
            }
            try statement(.replaceCredential).executeRaw(values)
            try deleteTags(space: credential.spaceIndex, user: credential.userIndex)
        }
        observer?.rowAdded(SealedRowFingerprint(credential))
        try insertTags(credential.tagIndexes, space: credential.spaceIndex, user: credential.userIndex)
    }

    package func replaceTags(space spaceIndex: BlindIndex, user userIndex: BlindIndex, with tagIndexes: [BlindIndex]) throws {
        try deleteTags(space: spaceIndex, user: userIndex)
        try insertTags(tagIndexes, space: spaceIndex, user: userIndex)
    }

    // MARK: Tags

    private static let tagColumns = "tag_index, space_index, user_index"

    /// A statement on `credential_tags`; nil when the store has no such table (a store that a
    /// test migrated only part of the way, before 0010: no row of it has tags).
    private func tagStatement(_ sql: String) throws -> Statement? {
        do {
            return try db.cachedStatement(sql: sql)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
            guard try !db.hasTable("credential_tags") else { throw error }
            return nil
        }
    }

    /// Deletes a credential row's tag rows, each reported removed (by the index on the row's key).
    private func deleteTags(space spaceIndex: BlindIndex, user userIndex: BlindIndex) throws {
        guard let statement = try tagStatement(
            "DELETE FROM credential_tags WHERE space_index = ? AND user_index = ? RETURNING \(Self.tagColumns)")
        else { return }
        try statement.forEachRawRow(binding: [spaceIndex, userIndex]) { row in
            guard let tag = row.blob(0) else { throw Self.damagedRow }
            observer?.rowRemoved(SealedRowFingerprint(tagIndex: BlindIndex(tag), space: spaceIndex, user: userIndex))
        }
    }

    private func insertTags(_ tagIndexes: [BlindIndex], space spaceIndex: BlindIndex, user userIndex: BlindIndex) throws {
        guard !tagIndexes.isEmpty, let statement = try tagStatement(
            "INSERT INTO credential_tags (\(Self.tagColumns)) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
        else { return }
        for tagIndex in tagIndexes {
            try statement.executeRaw([.blob(tagIndex), .blob(spaceIndex), .blob(userIndex)])
            if db.changesCount > 0 { observer?.rowAdded(SealedRowFingerprint(tagIndex: tagIndex, space: spaceIndex, user: userIndex)) }
        }
    }

    package func tagCount(_ tagIndex: BlindIndex) throws -> Int {
        var count = 0
        try tagStatement("SELECT count(*) FROM credential_tags WHERE tag_index = ?")?.forEachRawRow(binding: [tagIndex]) { row in
            count = Int(row.int64(0))
        }
        return count
    }

    package func credentialKeys(tagged tagIndex: BlindIndex) throws -> [(space: BlindIndex, user: BlindIndex)] {
        var keys: [(space: BlindIndex, user: BlindIndex)] = []
        try tagStatement("SELECT space_index, user_index FROM credential_tags WHERE tag_index = ?")?.forEachRawRow(binding: [tagIndex]) { row in
            guard let space = row.blob(0), let user = row.blob(1) else { throw Self.damagedRow }
            keys.append((BlindIndex(space), BlindIndex(user)))
        }
        return keys
    }

    package func deleteAllCredentials() throws {
        if let observer {
            try forEachFingerprint(in: [.credentials, .defaultChoices, .credentialTags]) { fingerprint, _ in observer.rowRemoved(fingerprint) }
        }
        try db.execute(sql: "DELETE FROM credentials; DELETE FROM default_choices")
        try tagStatement("DELETE FROM credential_tags")?.executeRaw([])
    }

    package func deleteCredential(space spaceIndex: BlindIndex, user userIndex: BlindIndex) throws {
        if let observer, let old = try fingerprint(.credentials, [spaceIndex, userIndex]) {
            observer.rowRemoved(old)
        }
        try db.cachedStatement(sql: "DELETE FROM credentials WHERE space_index = ? AND user_index = ?")
            .executeRaw([.blob(spaceIndex), .blob(userIndex)])
        try deleteTags(space: spaceIndex, user: userIndex)
        try deleteKeptVersions(space: spaceIndex, user: userIndex)
    }

    package func setDefaultChoice(_ choice: SealedDefault) throws {
        let values: [RawValue] = [.blob(choice.spaceIndex), .blob(choice.userIndex), .blob(choice.sealedUser)]
        // As in `upsert(_:)`: a new choice goes straight in, one that is there is read and replaced.
        try statement(.insertDefaultChoice).executeRaw(values)
        if db.changesCount == 0 {
            if let observer, let old = try fingerprint(.defaultChoices, [choice.spaceIndex]) { observer.rowRemoved(old) }
            try statement(.replaceDefaultChoice).executeRaw(values)
        }
        observer?.rowAdded(SealedRowFingerprint(choice))
    }

    package func deleteDefaultChoice(space spaceIndex: BlindIndex) throws {
        if let observer, let old = try fingerprint(.defaultChoices, [spaceIndex]) { observer.rowRemoved(old) }
        try db.cachedStatement(sql: "DELETE FROM default_choices WHERE space_index = ?").executeRaw([.blob(spaceIndex)])
    }

    package func appendChange(sequence: Int64, writer: [UInt8], processID: Int32, written: Int64, changeTotal: Int64, sealedChanges: [UInt8]) throws {
        try statement(.appendChange).executeRaw([
                .integer(sequence), .blob(writer), .integer(Int64(processID)), .integer(written),
                .integer(changeTotal), .blob(sealedChanges),
            ])
    }

    package func pruneChangeLog(keepingChangesAfter keptChanges: Int64, writtenSince: Int64) throws {
        // From the head of the log, oldest first: everything before the first entry still within
        // the retention or holding one of the newest changes (`change_total` grows with `seq`).
        // Sequence numbers are the table's rowids, so this visits only what it deletes and one
        // entry more, with no index to keep up on every write. An entry never leaves before its
        // retention, even when the clock stepped back between writes: a younger entry ahead of it
        // holds it back instead. The newest entry always matches, so the log never empties.
        guard keptChanges > 0 else { return }
        var firstKept: Int64?
        try statement(.firstKeptChange).forEachRawRow(values: [.integer(keptChanges), .integer(writtenSince)]) { row in
            guard let seq = row.integer(0) else { throw Self.damagedRow }
            firstKept = seq
        }
        guard let firstKept else { return }
        // A bound of its own, so SQLite's range covers the deleted entries alone.
        try statement(.pruneChangeLog).executeRaw([.integer(firstKept)])
    }

    // MARK: Table seal

    /// Each sealed table's fingerprint columns: the row's key columns, then its tags (the last 16
    /// bytes of each ciphertext: nonce ‖ ciphertext ‖ tag, or, for the clock, which has no
    /// ciphertext, its clear values), then whether the row is half of a synchronizable item
    /// (see ``CredentialRepositoryReading/forEachFingerprint(in:_:)``).
    static func fingerprintSQL(_ table: SealedRowFingerprint.Table) -> (table: String, columns: String, keyColumns: Int32, fingerprintColumns: Int32, key: String) {
        switch table {
        case .credentials:
            // The origin index last, after the flag: it places the row in the seal's tree, and is
            // bound into both tags.
            ("credentials", "space_index, user_index, substr(sealed_space, -16), substr(sealed_credential, -16), persistence = 3, origin_index", 2, 4,
             "space_index = ? AND user_index = ?")
        case .defaultChoices:
            ("default_choices", "space_index, user_index, substr(sealed_user, -16), 0", 2, 3, "space_index = ?")
        case .trustedDevices:
            ("trusted_devices", "key_index, substr(sealed_public_key, -16), 0", 1, 2, "key_index = ?")
        case .syncItems:
            // The clear columns too (they are bound into the tag as well), so that an edit of
            // them is seen when the store is opened, not only when the register is read.
            ("sync_items", "space_index, user_index, substr(sealed_state, -16), deleted, wall, deleted = 0", 2, 5,
             "space_index = ? AND user_index = ?")
        case .syncDefaults:
            ("sync_defaults", "space_index, substr(sealed_state, -16), 0", 1, 2, "space_index = ?")
        case .device:
            // One row (id = 1); its id and key are bound into the secret's tag, and taken as they are.
            ("device_identity", "device_id, public_key, substr(sealed_secret_key, -16), 0", 0, 3, "1")
        case .syncClock:
            // One row (id = 1), no ciphertext: the reading itself is the fingerprint.
            ("sync_clock", "wall, counter, 0", 0, 2, "1")
        case .credentialTags:
            // No ciphertext: the whole row is its key (the tag first, which groups it in the tree).
            ("credential_tags", "\(tagColumns), 0", 3, 3, "tag_index = ? AND space_index = ? AND user_index = ?")
        case .keptVersions:
            // The time it was replaced is part of the key (and bound into the tag as well).
            ("kept_versions", "space_index, user_index, kept, substr(sealed_version, -16), 0", 3, 4,
             "space_index = ? AND user_index = ? AND kept = ?")
        }
    }

    static func fingerprint(_ table: SealedRowFingerprint.Table, _ row: RawRow) -> SealedRowFingerprint {
        let shape = fingerprintSQL(table)
        var fingerprint = SealedRowFingerprint(table: table, key: [], tags: [], group: [])
        for column in 0..<shape.fingerprintColumns {
            // A blob as it is, an integer as 8 big-endian bytes; any other type (which no writer
            // stores) as a byte no blob or integer of the right size matches.
            let bytes: [UInt8]
            if let blob = row.blob(column) {
                bytes = blob
            } else if let integer = row.integer(column) {
                bytes = withUnsafeBytes(of: integer.bigEndian) { Array($0) }
            } else {
                bytes = [0xFF]
            }
            if column == 0, shape.keyColumns > 0 { fingerprint.group = bytes }
            if column < shape.keyColumns {
                fingerprint.key += bytes
            } else {
                fingerprint.tags += bytes
            }
        }
        if table == .credentials { fingerprint.originIndex = row.blob(shape.fingerprintColumns + 1) ?? [0xFF] }
        return fingerprint
    }

    // One row's fingerprint query, by its primary key, spelled once per table (as the per-row
    // statements above): GRDB caches statements by their text.
    private static let fingerprintByKeySQL: [SealedRowFingerprint.Table: String] = Dictionary(
        uniqueKeysWithValues: SealedRowFingerprint.Table.allCases.map { table in
            let shape = fingerprintSQL(table)
            return (table, "SELECT \(shape.columns) FROM \(shape.table) WHERE \(shape.key)")
        })

    /// The fingerprint of the row of `table` with primary key `key` (none for the one-row
    /// tables), if there is one.
    private func fingerprint(_ table: SealedRowFingerprint.Table, _ key: [BlindIndex]) throws -> SealedRowFingerprint? {
        var result: SealedRowFingerprint?
        try db.cachedStatement(sql: Self.fingerprintByKeySQL[table]!).forEachRawRow(binding: key) { row in
            result = Self.fingerprint(table, row)
        }
        return result
    }

    package func forEachFingerprint(in tables: [SealedRowFingerprint.Table], _ body: (SealedRowFingerprint, Bool) throws -> Void) throws {
        for table in tables {
            // A store a test migrated only part of the way has no tags (nor their table).
            if table == .credentialTags, try !db.hasTable("credential_tags") { continue }
            if table == .keptVersions, try !db.hasTable("kept_versions") { continue }
            let shape = Self.fingerprintSQL(table)
            try db.cachedStatement(sql: "SELECT \(shape.columns) FROM \(shape.table)").forEachRawRow(binding: []) { row in
                try body(Self.fingerprint(table, row), row.int64(shape.fingerprintColumns) != 0)
            }
        }
    }

    package func unpairedSyncItems() throws -> (credentials: [SealedCredential], registers: [SealedSyncItem]) {
        let credentials = try Row.fetchAll(db, sql: """
            SELECT \(Self.credentialColumns) FROM credentials AS c WHERE persistence = 3 AND NOT EXISTS
                (SELECT 1 FROM sync_items AS s WHERE s.space_index = c.space_index AND s.user_index = c.user_index AND s.deleted = 0)
            """).map(Self.credential)
        var registers: [SealedSyncItem] = []
        try db.cachedStatement(sql: """
            SELECT \(Self.syncItemColumns) FROM sync_items AS s WHERE deleted = 0 AND NOT EXISTS
                (SELECT 1 FROM credentials AS c WHERE c.space_index = s.space_index AND c.user_index = s.user_index AND c.persistence = 3)
            """).forEachRawRow(binding: []) { registers.append(try Self.syncItem($0)) }
        return (credentials, registers)
    }

    /// The seal's table: `store_seal` since migration 0008, `table_seal` before (a store that a
    /// test migrated only part of the way, and migration 0008 itself, which checks the old seal).
    private func sealTable() throws -> String {
        try db.hasTable("store_seal") ? "store_seal" : "table_seal"
    }

    package func tableSeal() throws -> TableSeal? {
        var result: TableSeal?
        let statement: Statement
        do {
            statement = try db.cachedStatement(sql: "SELECT generation, row_count, digest, mac FROM store_seal WHERE id = 1")
        } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
            statement = try db.cachedStatement(sql: "SELECT generation, row_count, digest, mac FROM \(try sealTable()) WHERE id = 1")
        }
        try statement.forEachRawRow(binding: []) { row in
            guard let digest = row.blob(2), let mac = row.blob(3) else { throw Self.damagedRow }
            result = TableSeal(generation: row.int64(0), rowCount: row.int64(1), digest: digest, mac: mac)
        }
        return result
    }

    package func setTableSeal(_ seal: TableSeal) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO \(try sealTable()) (id, generation, row_count, digest, mac) VALUES (1, ?, ?, ?, ?)")
            .executeRaw([.integer(seal.generation), .integer(seal.rowCount), .blob(seal.digest), .blob(seal.mac)])
    }

    // MARK: Seal tree

    /// A node of the seal tree that is not a blob: no writer of credstore stores one, and the
    /// tree exists to catch edits, so it is tampering rather than damage.
    private static let editedSealNode = CredentialStorageError(.tamperDetected,
        "a node of the store's seal was edited outside credstore; restore the store from a backup")

    package func sealNodes(_ ids: [Int64]) throws -> [Int64: [UInt8]] {
        var result: [Int64: [UInt8]] = [:]
        let statement = try self.statement(.sealNode)
        for id in ids where result[id] == nil {
            try statement.forEachRawRow(values: [.integer(id)]) { row in
                guard let body = row.blob(0) else { throw Self.editedSealNode }
                result[id] = body
            }
        }
        return result
    }

    package func forEachSealNode(_ body: (Int64, [UInt8]) throws -> Void) throws {
        try db.cachedStatement(sql: "SELECT id, body FROM seal_nodes ORDER BY id").forEachRawRow(values: []) { row in
            guard let node = row.blob(1) else { throw Self.editedSealNode }
            try body(row.int64(0), node)
        }
    }

    /// ``spaceSQL`` with the seal's row and one node of its tree (the space's bucket), told apart
    /// by their NULL origin and space (see ``spaceWithSeal(_:nodeID:)``).
    static let spaceWithSealSQL = """
        \(spaceSQL)
        UNION ALL
        SELECT NULL, NULL, NULL, 1, generation, row_count, digest, mac FROM store_seal WHERE id = 1
        UNION ALL
        SELECT NULL, NULL, NULL, 2, id, NULL, body, NULL FROM seal_nodes WHERE id = ?2
        """

    package func spaceWithSeal(_ spaceIndex: BlindIndex, nodeID: Int64) throws -> (space: SealedSpace, seal: TableSeal?, nodes: [Int64: [UInt8]]) {
        let statement = try self.statement(.spaceWithSeal)
        var space = SealedSpace(credentials: [], defaultChoice: nil)
        var seal: TableSeal?
        var nodes: [Int64: [UInt8]] = [:]
        try statement.forEachRawRow(values: [.blob(spaceIndex.bytes), .integer(nodeID)]) { row in
            if !row.isNull(2) {
                space.credentials.append(try Self.credential(row))
            } else if !row.isNull(0) {
                guard let user = row.blob(1), let sealed = row.blob(6) else { throw Self.damagedRow }
                space.defaultChoice = SealedDefault(spaceIndex: spaceIndex, userIndex: BlindIndex(user), sealedUser: sealed)
            } else if row.int64(3) == 1 {
                guard let digest = row.blob(6), let mac = row.blob(7) else { throw Self.damagedRow }
                seal = TableSeal(generation: row.int64(4), rowCount: row.int64(5), digest: digest, mac: mac)
            } else {
                guard let body = row.blob(6) else { throw Self.editedSealNode }
                nodes[row.int64(4)] = body
            }
        }
        return (space, seal, nodes)
    }

    static let sealWithNodesSQL = """
        SELECT 1, generation, row_count, digest, mac FROM store_seal WHERE id = 1
        UNION ALL
        SELECT 2, id, NULL, body, NULL FROM seal_nodes WHERE id IN (?1, ?2, ?3)
        """

    /// The seal and every node whose id is below `bound`, in one statement.
    static let sealWithNodesBelowSQL = """
        SELECT 1, generation, row_count, digest, mac FROM store_seal WHERE id = 1
        UNION ALL
        SELECT 2, id, NULL, body, NULL FROM seal_nodes WHERE id < ?1
        """

    package func sealWithNodes(_ ids: [Int64]) throws -> (seal: TableSeal?, nodes: [Int64: [UInt8]]) {
        var seal: TableSeal?
        var nodes: [Int64: [UInt8]] = [:]
        let statement: Statement
        let values: [RawValue]
        if ids.count <= 3 {
            statement = try self.statement(.sealWithNodes)
            // -1 is no node's id.
            values = (ids + [-1, -1, -1]).prefix(3).map { RawValue.integer($0) }
        } else if ids.count <= 64 {
            // A few paths (an origin's lookup): three at a time. Each statement reads the seal too;
            // inside a transaction, as those callers are, they all read the same one.
            var result: (seal: TableSeal?, nodes: [Int64: [UInt8]]) = (nil, [:])
            for start in stride(from: 0, to: ids.count, by: 3) {
                let part = try sealWithNodes(Array(ids[start..<min(start + 3, ids.count)]))
                guard result.seal == nil || part.seal == result.seal else { throw Self.damagedRow }
                result.seal = part.seal
                result.nodes.merge(part.nodes) { first, _ in first }
            }
            return result
        } else {
            // Many nodes (all the interior ones): one range, then keep those asked for.
            statement = try db.cachedStatement(sql: Self.sealWithNodesBelowSQL)
            values = [.integer((ids.max() ?? 0) + 1)]
        }
        let wanted = Set(ids)
        try statement.forEachRawRow(values: values) { row in
            guard let blob = row.blob(3) else { throw row.int64(0) == 1 ? Self.damagedRow : Self.editedSealNode }
            if row.int64(0) == 1 {
                guard let mac = row.blob(4) else { throw Self.damagedRow }
                seal = TableSeal(generation: row.int64(1), rowCount: row.int64(2), digest: blob, mac: mac)
            } else if wanted.contains(row.int64(1)) {
                nodes[row.int64(1)] = blob
            }
        }
        return (seal, nodes)
    }

    package func setSealNode(_ id: Int64, body: [UInt8]?) throws {
        if let body {
            try statement(.setSealNode).executeRaw([.integer(id), .blob(body)])
        } else {
            try statement(.deleteSealNode).executeRaw([.integer(id)])
        }
    }

    package func deleteAllSealNodes() throws {
        try db.execute(sql: "DELETE FROM seal_nodes")
    }

    // MARK: Row decoding

    static let damagedRow = CredentialStorageError(.corrupt, "a row of the store is damaged; verify the store and restore it from a backup")

    private static func credential(_ row: RawRow) throws -> SealedCredential {
        guard let space = row.blob(0), let user = row.blob(1), let origin = row.blob(2),
              let persistence = Persistence(storedCode: row.int64(3)), !row.isNull(4), !row.isNull(5),
              let sealedSpace = row.blob(6), let sealedCredential = row.blob(7)
        else { throw damagedRow }
        return SealedCredential(
            spaceIndex: BlindIndex(space), userIndex: BlindIndex(user), originIndex: BlindIndex(origin), persistence: persistence,
            created: row.int64(4), modified: row.int64(5),
            sealedSpace: sealedSpace, sealedCredential: sealedCredential)
    }

    private static func credential(_ row: Row) throws -> SealedCredential {
        guard let space = row[0] as Data?, let user = row[1] as Data?, let origin = row[2] as Data?,
              let persistence = persistence(row[3]), let created = row[4] as Int64?, let modified = row[5] as Int64?,
              let sealedSpace = row[6] as Data?, let sealedCredential = row[7] as Data?
        else { throw damagedRow }
        return SealedCredential(
            spaceIndex: BlindIndex(space), userIndex: BlindIndex(user), originIndex: BlindIndex(origin),
            persistence: persistence, created: created, modified: modified,
            sealedSpace: [UInt8](sealedSpace), sealedCredential: [UInt8](sealedCredential))
    }

    private static func defaultChoice(spaceIndex: BlindIndex, _ user: DatabaseValue, _ sealed: DatabaseValue) throws -> SealedDefault {
        guard let user = Data.fromDatabaseValue(user), let sealed = Data.fromDatabaseValue(sealed) else { throw damagedRow }
        return SealedDefault(spaceIndex: spaceIndex, userIndex: BlindIndex(user), sealedUser: [UInt8](sealed))
    }

    /// Disk tiers as stored. A value outside these is damage (or tampering, which the row's
    /// associated data would catch anyway).
    private static func persistence(_ value: DatabaseValue) -> Persistence? {
        Int64.fromDatabaseValue(value).flatMap(Persistence.init(storedCode:))
    }
}

extension Database {
    /// Whether the schema has table `name`: one cached query of `sqlite_master`, where GRDB's
    /// `tableExists` loads and caches its whole schema description, a cost every process that
    /// opens a store would pay (`credstore get` among them).
    package func hasTable(_ name: String) throws -> Bool {
        var found = false
        try cachedStatement(sql: "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
            .forEachRawRow(values: [.text(name)]) { _ in found = true }
        return found
    }
}
