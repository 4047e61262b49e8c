import Foundation
import GRDB

/// The SQL of the store, over one connection inside a read or a write.
struct SQLiteAccess: CredentialRepositoryWriting {
    let db: Database

    private static let credentialColumns = """
        space_index, user_index, origin_index, persistence, created, modified, sealed_space, sealed_credential
        """

    // MARK: Reading

    func header() throws -> (StoreHeader, [KeySlot])? {
        guard try db.tableExists("store_header") else { return nil }
        guard let row = try Row.fetchOne(db, sql: "SELECT format, store_id, key_generation, created FROM store_header WHERE id = 1"),
              let format = row[0] as Int?, let storeID = row[1] as Data?,
              let generation = row[2] as Int64?, let created = row[3] as Int64?
        else {
            throw CredentialStorageError(.corrupt, "the store's header is missing or damaged; restore the store from a backup")
        }
        let header = StoreHeader(format: format, storeID: [UInt8](storeID), keyGeneration: generation, created: created)
        let slots = try Row.fetchAll(db, sql: """
            SELECT kind, kdf_salt, kdf_opslimit, kdf_memlimit, commitment, wrapped_root_key FROM key_slots
            """).map { row -> KeySlot in
            guard let kindName = row[0] as String?, let kind = KeySlot.Kind(rawValue: kindName),
                  let commitment = row[4] as Data?, let wrapped = row[5] as Data?
            else {
                throw CredentialStorageError(.corrupt, "a key slot of the store is damaged; restore the store from a backup")
            }
            var cost: Sodium.PasswordHashCost?
            if let ops = row[2] as Int64?, let mem = row[3] as Int64? {
                cost = Sodium.PasswordHashCost(opsLimit: UInt64(clamping: ops), memLimit: Int(clamping: mem))
            }
            return KeySlot(
                kind: kind, salt: (row[1] as Data?).map { [UInt8]($0) }, cost: cost,
                commitment: [UInt8](commitment), wrappedRootKey: [UInt8](wrapped))
        }
        return (header, slots)
    }

    func space(_ spaceIndex: [UInt8]) throws -> SealedSpace {
        let statement = try db.cachedStatement(sql: "SELECT \(Self.credentialColumns) FROM credentials WHERE space_index = ?")
        var result = SealedSpace(credentials: [], defaultChoice: nil)
        try statement.forEachRawRow(binding: [spaceIndex]) { result.credentials.append(try Self.credential($0)) }
        if result.credentials.count > 1 {
            result.defaultChoice = try defaultChoice(space: spaceIndex)
        }
        return result
    }

    func credential(space spaceIndex: [UInt8], user userIndex: [UInt8]) throws -> SealedCredential? {
        let statement = try db.cachedStatement(sql: """
            SELECT \(Self.credentialColumns) FROM credentials WHERE space_index = ? AND user_index = ?
            """)
        var result: SealedCredential?
        try statement.forEachRawRow(binding: [spaceIndex, userIndex]) { result = try Self.credential($0) }
        return result
    }

    func credentials(origin originIndex: [UInt8]) throws -> [SealedCredential] {
        let statement = try db.cachedStatement(sql: "SELECT \(Self.credentialColumns) FROM credentials WHERE origin_index = ?")
        return try Row.fetchAll(statement, arguments: [Data(originIndex)]).map(Self.credential)
    }

    func defaultChoice(space spaceIndex: [UInt8]) throws -> SealedDefault? {
        let statement = try db.cachedStatement(sql: "SELECT user_index, sealed_user FROM default_choices WHERE space_index = ?")
        var result: SealedDefault?
        try statement.forEachRawRow(binding: [spaceIndex]) { row in
            guard let user = row.blob(0), let sealed = row.blob(1) else { throw Self.damagedRow }
            result = SealedDefault(spaceIndex: spaceIndex, userIndex: user, sealedUser: sealed)
        }
        return result
    }

    func defaultChoices(spaces spaceIndexes: Set<[UInt8]>) throws -> [[UInt8]: SealedDefault] {
        var result: [[UInt8]: SealedDefault] = [:]
        for spaceIndex in spaceIndexes {
            result[spaceIndex] = try defaultChoice(space: spaceIndex)
        }
        return result
    }

    func allCredentials() throws -> [SealedCredential] {
        try Row.fetchAll(db, sql: "SELECT \(Self.credentialColumns) FROM credentials").map(Self.credential)
    }

    func allDefaultChoices() throws -> [SealedDefault] {
        try Row.fetchAll(db, sql: "SELECT space_index, user_index, sealed_user FROM default_choices").map { row in
            guard let space = row[0] as Data? else { throw Self.damagedRow }
            return try Self.defaultChoice(spaceIndex: [UInt8](space), row[1], row[2])
        }
    }

    func latestChangeSequence() throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT coalesce(max(seq), 0) FROM change_log")) ?? 0
    }

    func changes(after sequence: Int64) throws -> [SealedChange] {
        let statement = try db.cachedStatement(sql: """
            SELECT seq, writer, pid, kind, persistence, sealed_subject FROM change_log WHERE seq > ? ORDER BY seq
            """)
        return try Row.fetchAll(statement, arguments: [sequence]).map { row in
            guard let seq = row[0] as Int64?, let writer = row[1] as Data?, let pid = row[2] as Int64?,
                  let kindCode = row[3] as Int?, let kind = CredentialChange.Kind(code: kindCode),
                  let persistence = Self.persistence(row[4]), let subject = row[5] as Data?
            else { throw Self.damagedRow }
            return SealedChange(
                sequence: seq, writer: [UInt8](writer), processID: Int32(truncatingIfNeeded: pid),
                kind: kind, persistence: persistence, sealedSubject: [UInt8](subject))
        }
    }

    // MARK: Writing

    func initialize(header: StoreHeader, slots: [KeySlot]) throws {
        try db.execute(
            sql: "INSERT INTO store_header (id, format, store_id, key_generation, created) VALUES (1, ?, ?, ?, ?)",
            arguments: [header.format, Data(header.storeID), header.keyGeneration, header.created])
        try replaceSlots(slots, header: header)
    }

    func replaceSlots(_ slots: [KeySlot], header: StoreHeader) throws {
        try db.execute(sql: "UPDATE store_header SET key_generation = ? WHERE id = 1", arguments: [header.keyGeneration])
        try db.execute(sql: "DELETE FROM key_slots")
        for slot in slots {
            try db.execute(sql: """
                INSERT INTO key_slots (kind, kdf_salt, kdf_opslimit, kdf_memlimit, commitment, wrapped_root_key)
                VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [
                    slot.kind.rawValue, slot.salt.map { Data($0) },
                    slot.cost.map { Int64(clamping: $0.opsLimit) }, slot.cost.map { Int64($0.memLimit) },
                    Data(slot.commitment), Data(slot.wrappedRootKey),
                ])
        }
    }

    func upsert(_ credential: SealedCredential) throws {
        let statement = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO credentials (\(Self.credentialColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        try statement.execute(arguments: [
            Data(credential.spaceIndex), Data(credential.userIndex), Data(credential.originIndex),
            Self.code(credential.persistence), credential.created, credential.modified,
            Data(credential.sealedSpace), Data(credential.sealedCredential),
        ])
    }

    func deleteAllCredentials() throws {
        try db.execute(sql: "DELETE FROM credentials; DELETE FROM default_choices")
    }

    func deleteCredential(space spaceIndex: [UInt8], user userIndex: [UInt8]) throws {
        try db.cachedStatement(sql: "DELETE FROM credentials WHERE space_index = ? AND user_index = ?")
            .execute(arguments: [Data(spaceIndex), Data(userIndex)])
    }

    func setDefaultChoice(_ choice: SealedDefault) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO default_choices (space_index, user_index, sealed_user) VALUES (?, ?, ?)")
            .execute(arguments: [Data(choice.spaceIndex), Data(choice.userIndex), Data(choice.sealedUser)])
    }

    func deleteDefaultChoice(space spaceIndex: [UInt8]) throws {
        try db.cachedStatement(sql: "DELETE FROM default_choices WHERE space_index = ?").execute(arguments: [Data(spaceIndex)])
    }

    /// Change-log entries younger than this are kept, however many: a watcher polls five times a
    /// second, and one transaction (an import) may log thousands at once.
    static let changeLogRetentionMillis: Int64 = 60_000
    /// The newest entries kept whatever their age, for watchers that were suspended a while.
    static let changeLogMinimumEntries: Int64 = 1000

    func appendChange(
        writer: [UInt8], processID: Int32, kind: CredentialChange.Kind, persistence: Persistence,
        seal: (Int64) -> [UInt8]
    ) throws {
        let sequence = try latestChangeSequence() + 1
        let now = Mutation.now()
        try db.cachedStatement(sql: """
            INSERT INTO change_log (seq, writer, pid, kind, persistence, written, sealed_subject) VALUES (?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [sequence, Data(writer), Int64(processID), kind.code, Self.code(persistence), now, Data(seal(sequence))])
        try db.cachedStatement(sql: "DELETE FROM change_log WHERE seq <= ? AND written < ?")
            .execute(arguments: [sequence - Self.changeLogMinimumEntries, now - Self.changeLogRetentionMillis])
    }

    // MARK: Row decoding

    private static let damagedRow = CredentialStorageError(.corrupt, "a row of the store is damaged; run `credstore verify` and restore from a backup")

    private static func credential(_ row: RawRow) throws -> SealedCredential {
        guard let space = row.blob(0), let user = row.blob(1), let origin = row.blob(2),
              let persistence = persistence(code: row.int64(3)), !row.isNull(4), !row.isNull(5),
              let sealedSpace = row.blob(6), let sealedCredential = row.blob(7)
        else { throw damagedRow }
        return SealedCredential(
            spaceIndex: space, userIndex: user, originIndex: origin, persistence: persistence,
            created: row.int64(4), modified: row.int64(5),
            sealedSpace: sealedSpace, sealedCredential: sealedCredential)
    }

    private static func credential(_ row: Row) throws -> SealedCredential {
        guard let space = row[0] as Data?, let user = row[1] as Data?, let origin = row[2] as Data?,
              let persistence = persistence(row[3]), let created = row[4] as Int64?, let modified = row[5] as Int64?,
              let sealedSpace = row[6] as Data?, let sealedCredential = row[7] as Data?
        else { throw damagedRow }
        return SealedCredential(
            spaceIndex: [UInt8](space), userIndex: [UInt8](user), originIndex: [UInt8](origin),
            persistence: persistence, created: created, modified: modified,
            sealedSpace: [UInt8](sealedSpace), sealedCredential: [UInt8](sealedCredential))
    }

    private static func defaultChoice(spaceIndex: [UInt8], _ user: DatabaseValue, _ sealed: DatabaseValue) throws -> SealedDefault {
        guard let user = Data.fromDatabaseValue(user), let sealed = Data.fromDatabaseValue(sealed) else { throw damagedRow }
        return SealedDefault(spaceIndex: spaceIndex, userIndex: [UInt8](user), sealedUser: [UInt8](sealed))
    }

    /// Disk tiers as stored. A value outside these is damage (or tampering, which the row's
    /// associated data would catch anyway).
    static func code(_ persistence: Persistence) -> Int {
        switch persistence {
        case .none: 0
        case .forSession: 1
        case .permanent: 2
        case .synchronizable: 3
        }
    }

    private static func persistence(_ value: DatabaseValue) -> Persistence? {
        Int64.fromDatabaseValue(value).flatMap(persistence(code:))
    }

    private static func persistence(code: Int64) -> Persistence? {
        switch code {
        case 2: .permanent
        case 3: .synchronizable
        default: nil
        }
    }
}
