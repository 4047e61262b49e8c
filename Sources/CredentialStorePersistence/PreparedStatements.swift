import GRDB

/// The statements of the lookup and `set` paths, held by the connection's repository and found by
/// number, not by their SQL text.
///
/// GRDB's statement cache is a dictionary keyed by the SQL string, so every use hashes and compares
/// the whole text, up to a few hundred bytes, which showed in the profiles of a lookup and of a
/// `set`, which runs some twenty statements (docs/performance.md, "Lookup and set against C"). The
/// statements are GRDB's own (taken from its cache the first time), so they are prepared as it
/// prepares them; SQLite re-prepares one by itself if another connection changes the schema.
///
/// Used only on the repository's serialized connection, inside its reads and writes, as GRDB's
/// cache is: hence unchecked `Sendable`.
package final class PreparedStatements: @unchecked Sendable {
    package enum Key: Int, CaseIterable {
        case space, credentialByKey, defaultChoice, syncItemByKey, changeLogPosition, keyGeneration
        case insertCredential, replaceCredential, insertDefaultChoice, replaceDefaultChoice, appendChange
        case firstKeptChange, pruneChangeLog
        case spaceWithSeal, sealWithNodes, sealNode, setSealNode, deleteSealNode

        var sql: String {
            switch self {
            case .space: SQLiteAccess.spaceSQL
            case .credentialByKey: SQLiteAccess.credentialByKeySQL
            case .defaultChoice: "SELECT user_index, sealed_user FROM default_choices WHERE space_index = ?"
            case .syncItemByKey: SQLiteAccess.syncItemByKeySQL
            case .changeLogPosition: "SELECT seq, change_total FROM change_entries ORDER BY seq DESC LIMIT 1"
            case .keyGeneration: "SELECT key_generation FROM store_header WHERE id = 1"
            case .insertCredential: SQLiteAccess.insertCredentialSQL
            case .replaceCredential: SQLiteAccess.replaceCredentialSQL
            case .insertDefaultChoice:
                "INSERT INTO default_choices (space_index, user_index, sealed_user) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
            case .replaceDefaultChoice: "INSERT OR REPLACE INTO default_choices (space_index, user_index, sealed_user) VALUES (?, ?, ?)"
            case .appendChange:
                "INSERT INTO change_entries (seq, writer, pid, written, change_total, sealed_changes) VALUES (?, ?, ?, ?, ?, ?)"
            case .firstKeptChange: "SELECT seq FROM change_entries WHERE change_total > ? OR written >= ? ORDER BY seq LIMIT 1"
            case .pruneChangeLog: "DELETE FROM change_entries WHERE seq < ?"
            case .spaceWithSeal: SQLiteAccess.spaceWithSealSQL
            case .sealWithNodes: SQLiteAccess.sealWithNodesSQL
            case .sealNode: "SELECT body FROM seal_nodes WHERE id = ?"
            case .setSealNode: "INSERT OR REPLACE INTO seal_nodes (id, body) VALUES (?, ?)"
            case .deleteSealNode: "DELETE FROM seal_nodes WHERE id = ?"
            }
        }
    }

    private var statements = [Statement?](repeating: nil, count: Key.allCases.count)

    package init() {}

    func statement(_ key: Key, in db: Database) throws -> Statement {
        if let statement = statements[key.rawValue] { return statement }
        let statement = try db.cachedStatement(sql: key.sql)
        statements[key.rawValue] = statement
        return statement
    }

    /// Finalizes them (the last reference goes): before the connection closes.
    package func removeAll() {
        statements = [Statement?](repeating: nil, count: Key.allCases.count)
    }
}
