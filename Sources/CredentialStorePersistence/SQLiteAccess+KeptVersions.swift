import CredentialStoreCore
package import CredentialStoreCrypto
import GRDB

/// The kept versions of credentials that lost a concurrent edit (`kept_versions`, migration 0011).
extension SQLiteAccess {
    private static let keptColumns = "space_index, user_index, kept, sealed_version"

    /// A statement on `kept_versions`; nil when the store has no such table (a store that a test
    /// migrated only part of the way, before 0011: it kept nothing).
    private func keptStatement(_ sql: String) throws -> Statement? {
        do {
            return try db.cachedStatement(sql: sql)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
            guard try !db.hasTable("kept_versions") else { throw error }
            return nil
        }
    }

    private static func keptVersion(_ row: RawRow) throws -> SealedKeptVersion {
        guard let space = row.blob(0), let user = row.blob(1), row.integer(2) != nil, let sealed = row.blob(3) else { throw damagedRow }
        return SealedKeptVersion(spaceIndex: BlindIndex(space), userIndex: BlindIndex(user), kept: row.int64(2), sealedVersion: sealed)
    }

    package func keptVersions(space spaceIndex: BlindIndex) throws -> [SealedKeptVersion] {
        var result: [SealedKeptVersion] = []
        try keptStatement("SELECT \(Self.keptColumns) FROM kept_versions WHERE space_index = ?")?
            .forEachRawRow(binding: [spaceIndex]) { result.append(try Self.keptVersion($0)) }
        return result
    }

    package func allKeptVersions() throws -> [SealedKeptVersion] {
        var result: [SealedKeptVersion] = []
        try keptStatement("SELECT \(Self.keptColumns) FROM kept_versions")?
            .forEachRawRow(binding: []) { result.append(try Self.keptVersion($0)) }
        return result
    }

    package func insertKeptVersion(_ version: SealedKeptVersion) throws {
        try deleteKeptVersion(space: version.spaceIndex, user: version.userIndex, kept: version.kept)
        guard let statement = try keptStatement("INSERT INTO kept_versions (\(Self.keptColumns)) VALUES (?, ?, ?, ?)") else {
            throw CredentialStorageError(.corrupt, "the store has no table for kept versions; open it with credstore to migrate it")
        }
        try statement.executeRaw([.blob(version.spaceIndex), .blob(version.userIndex), .integer(version.kept), .blob(version.sealedVersion)])
        observer?.rowAdded(SealedRowFingerprint(version))
    }

    package func deleteKeptVersion(space spaceIndex: BlindIndex, user userIndex: BlindIndex, kept: Int64) throws {
        try deleteKept(where: "space_index = ? AND user_index = ? AND kept = ?", [.blob(spaceIndex), .blob(userIndex), .integer(kept)])
    }

    /// Deletes every kept version of one credential (it was removed).
    func deleteKeptVersions(space spaceIndex: BlindIndex, user userIndex: BlindIndex) throws {
        try deleteKept(where: "space_index = ? AND user_index = ?", [.blob(spaceIndex), .blob(userIndex)])
    }

    package func deleteKeptVersions(before kept: Int64) throws {
        try deleteKept(where: "kept < ?", [.integer(kept)])
    }

    package func deleteAllKeptVersions() throws {
        try deleteKept(where: "1", [])
    }

    /// Deletes the rows `condition` selects; RETURNING hands back each, so the seal folds it out
    /// without a second read.
    private func deleteKept(where condition: String, _ values: [RawValue]) throws {
        let shape = Self.fingerprintSQL(.keptVersions)
        try keptStatement("DELETE FROM kept_versions WHERE \(condition) RETURNING \(shape.columns)")?
            .forEachRawRow(values: values) { row in
                observer?.rowRemoved(Self.fingerprint(.keptVersions, row))
            }
    }
}
