import CredentialStoreCore
import GRDB

/// Whole-file operations for backup and restore: a consistent copy of a store in use, and the
/// journal mode a copy needs where it is going.
extension SQLiteRepository {
    /// How SQLite journals a database file's transactions.
    package enum JournalMode: String, Sendable {
        /// A write-ahead log beside the file (`-wal`, `-shm`): what a store in use runs in, so
        /// that readers in other processes go on beside a writer.
        case writeAheadLog = "WAL"
        /// A rollback journal that exists only during a transaction: what a backup file runs in,
        /// so that it is always one file, whole.
        case rollback = "DELETE"
    }

    /// Writes a consistent copy of the database as of one moment to `path`, which must be an empty
    /// file (the caller creates it, 0600) or no file.
    ///
    /// SQLite's `VACUUM INTO` reads one snapshot, so writers of other processes go on (WAL) and
    /// their commits are in the copy whole or not at all. It writes only live rows, in the same
    /// schema: nothing deleted from the store, and none of its WAL frames, reach the copy. The
    /// copy has a rollback journal.
    package func snapshot(to path: String) throws {
        try Self.mapErrors {
            // Not in a transaction: VACUUM opens its own read of the source.
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "VACUUM INTO ?", arguments: [path])
            }
        }
    }

    /// Sets the file's journal mode (persistent: it is recorded in the file).
    package func setJournalMode(_ mode: JournalMode) throws {
        try Self.mapErrors {
            try queue.writeWithoutTransaction { db in
                let set = try String.fetchOne(db, sql: "PRAGMA journal_mode = \(mode.rawValue)")
                guard set?.uppercased() == mode.rawValue else {
                    throw CredentialStorageError(.io, "the database \(path) could not be switched to \(mode.rawValue) mode")
                }
            }
        }
    }

    // `close()` (SQLiteRepository.swift) closes the connection, which checkpoints the WAL into
    // the file and deletes it, so the file is then whole by itself and can be renamed.
}
