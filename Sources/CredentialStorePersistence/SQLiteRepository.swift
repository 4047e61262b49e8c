package import CredentialStoreCore
package import CredentialStoreCrypto
import CredentialStoreMigrations
package import Foundation
#if canImport(Glibc)
import Glibc
#endif
package import GRDB
import Synchronization
internal import GRDBSQLite

/// The store's persistence on one SQLite file, through GRDB: the entry point of this target, the
/// only one that holds SQL. A transaction is seen from above only as
/// ``CredentialRepositoryReading`` or ``CredentialRepositoryWriting``: sealed rows in, sealed rows
/// out, each write reported to a ``RowChangeObserver``.
///
/// One connection (a `DatabaseQueue`) in WAL mode: in-process access is serialized, other processes
/// read beside it and queue for the write lock (busy timeout) instead of failing.
package final class SQLiteRepository: Sendable {
    @usableFromInline let queue: DatabaseQueue
    package let path: String
    /// The hot paths' statements, found without hashing their SQL (``PreparedStatements``).
    @usableFromInline let prepared = PreparedStatements()

    /// How long a write waits for another process's transaction before reporting the store busy.
    package static let busyTimeout: TimeInterval = 15

    /// What the WAL is cut back to when SQLite starts it over after a checkpoint: about the 1,000
    /// pages after which it checkpoints. Kept at that size, the WAL is overwritten in place, and a
    /// commit's fdatasync writes its frames alone; a WAL cut to nothing grows with every commit,
    /// and then each fdatasync also writes the file's inode, a second device write (a durable
    /// `set` took about 14 % longer). Deleted and replaced credentials still leave it at once: see
    /// ``emptyLog(_:)``.
    package static let walSizeLimit = 4 * 1024 * 1024

    /// Whether a truncating checkpoint after a retired secret gave up (another process was in the
    /// way), so that the WAL may still hold it.
    private let logHoldsRetiredSecrets = Mutex(false)

    /// The connection's memory map of the file and page cache, in the ordinary case.
    package static let memoryMapBytes = 256 << 20
    package static let pageCacheKiB = 32 << 10
    /// The page cache while ``withSmallPageCache(_:)`` runs.
    package static let smallPageCacheKiB = 4 << 10

    package init(path: String) throws {
        self.path = path
        var configuration = Configuration()
        configuration.label = "credstore"
        configuration.busyMode = .timeout(Self.busyTimeout)
        configuration.prepareDatabase { db in
            // Per-connection settings; none of them writes to the file, so opening a store with a
            // wrong key leaves it byte-identical.
            try db.execute(sql: """
                PRAGMA secure_delete = ON;
                PRAGMA synchronous = FULL;
                PRAGMA cell_size_check = ON;
                PRAGMA trusted_schema = OFF;
                PRAGMA journal_size_limit = \(Self.walSizeLimit);
                PRAGMA mmap_size = \(Self.memoryMapBytes);
                PRAGMA cache_size = -\(Self.pageCacheKiB);
                """)
        }
        queue = try Self.mapErrors { try DatabaseQueue(path: path, configuration: configuration) }
    }

    deinit {
        // Finalized while the connection is still open, rather than left to keep it open as a zombie.
        prepared.removeAll()
    }

    /// Runs `body` with a 4 MiB page cache and no memory map of the file, then restores them: for
    /// one very large transaction, whose dirty pages then spill to the WAL instead of staying in
    /// memory, and whose reads of most of the file do not map it all into this process.
    package func withSmallPageCache<T>(_ body: () throws -> T) throws -> T {
        try Self.mapErrors {
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA cache_size = -\(Self.smallPageCacheKiB); PRAGMA mmap_size = 0")
            }
        }
        defer {
            try? queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA cache_size = -\(Self.pageCacheKiB); PRAGMA mmap_size = \(Self.memoryMapBytes)")
            }
        }
        return try body()
    }

    // MARK: Schema

    /// `corrupt` when the database file is shorter than its own header says, which SQLite does not
    /// notice by itself: it reads the missing pages as zeros, and a lookup can then come back empty
    /// instead of failing. Checked only when no WAL holds newer pages (none, or an empty one), as
    /// after every clean close; a few bytes read, no SQLite involved.
    package static func checkLength(database path: String) throws {
        var walInfo = stat()
        if lstat(path + "-wal", &walInfo) == 0, walInfo.st_size > 0 { return }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return }
        defer { Glibc.close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_size > 0 else { return }
        var header = [UInt8](repeating: 0, count: 100)
        guard pread(descriptor, &header, 100, 0) == 100, header.starts(with: Array("SQLite format 3\0".utf8)) else { return }
        func bigEndian(_ offset: Int) -> Int { header[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
        let rawPageSize = Int(header[16]) << 8 | Int(header[17])
        let pageSize = rawPageSize == 1 ? 65536 : rawPageSize
        // The in-header size counts only when the change counter matches "version valid for".
        guard bigEndian(24) == bigEndian(92), pageSize >= 512 else { return }
        let expected = Int64(bigEndian(28)) * Int64(pageSize)
        if Int64(info.st_size) < expected {
            throw CredentialStorageError(.corrupt,
                "the store's database is \(info.st_size) bytes, shorter than the \(expected) its header records: it was truncated; restore it from a backup")
        }
    }

    /// What runs in a migration's transaction once its steps are applied, given their identifiers:
    /// the steps that need the store's keys (filling in the table seal) are done there.
    package typealias AfterMigrating = ([String], any CredentialRepositoryWriting) throws -> Void

    /// Creates the store in a new file that no other process opens yet (the creation's temporary,
    /// which is linked into place once whole): WAL mode, every migration, the header and key slots,
    /// all in one transaction. Returns the header and slots as stored.
    package func create(
        header: StoreHeader, slots: [KeySlot], upTo identifier: String? = nil, observer: any RowChangeObserver,
        afterMigrating: AfterMigrating
    ) throws -> (StoreHeader, [KeySlot]) {
        try Self.mapErrors {
            // journal_mode cannot change inside a transaction; it is persistent, so set it once here.
            try queue.writeWithoutTransaction { db in
                _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
                try db.inTransaction(.immediate) {
                    let applied = try Self.migrate(db, upTo: identifier)
                    try SQLiteAccess(db: db).initialize(header: header, slots: slots)
                    try afterMigrating(applied, SQLiteAccess(db: db, observer: observer))
                    try observer.willCommit()
                    return .commit
                }
            }
        }
        guard let stored = try read({ try $0.header() }) else {
            throw CredentialStorageError(.corrupt, "the new store has no header; delete the empty file and try again")
        }
        return stored
    }

    /// Closes the connection, for good: the last connection to close checkpoints the WAL into the
    /// database and deletes it, so that the database file alone is the whole store (what a new
    /// store must be before it is linked into place).
    package func close() throws {
        try Self.mapErrors {
            // The held statements first: an unfinalized statement keeps the connection open.
            queue.writeWithoutTransaction { _ in prepared.removeAll() }
            try queue.close()
        }
    }

    /// The header and key slots, and whether migrations are pending, in one read: what opening an
    /// existing store needs first. A damaged or newer schema history is returned as the failure
    /// to report once the key has been checked, as ``migrate(upTo:afterMigrating:)`` reports it.
    package func openingState(upTo identifier: String? = nil) throws -> (
        header: (StoreHeader, [KeySlot])?, migrationsPending: Result<Bool, CredentialStorageError>, schema: StoreSchema.State?
    ) {
        try Self.mapErrors {
            try queue.read { db in
                let header = try SQLiteAccess(db: db).header()
                // The schema in the same snapshot (a few rows of a page SQLite has just read); its
                // newest migration from the history read that finds what is pending.
                let digest = try header == nil ? nil : SQLiteAccess(db: db).schemaDigest()
                do {
                    let history = try Self.migrationHistory(db, upTo: identifier)
                    let schema = digest.map { StoreSchema.State(digest: $0, newestMigration: history.newest) }
                    return (header, .success(!history.pending.isEmpty), schema)
                } catch let error as CredentialStorageError {
                    return (header, .failure(error), nil)
                }
            }
        }
    }

    /// Applies the migrations this store lacks, atomically. `upTo` stops early (for tests of
    /// stores made by older versions).
    package func migrate(upTo identifier: String? = nil, observer: any RowChangeObserver, afterMigrating: AfterMigrating) throws {
        try Self.mapErrors {
            let pending = try queue.read { db in try Self.pendingMigrations(db, upTo: identifier) }
            guard !pending.isEmpty else { return }
            try queue.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    // Another process may have migrated meanwhile: only what is still pending runs.
                    let applied = try Self.migrate(db, upTo: identifier)
                    if !applied.isEmpty {
                        try afterMigrating(applied, SQLiteAccess(db: db, observer: observer))
                        try observer.willCommit()
                    }
                    return .commit
                }
            }
        }
    }

    /// Whether the schema has migration `identifier` (stores made for tests of older versions
    /// may not).
    package func hasMigration(_ identifier: String) throws -> Bool {
        try Self.mapErrors {
            try queue.read { db in
                try db.hasTable("schema_migrations")
                    && Int.fetchOne(db, sql: "SELECT count(*) FROM schema_migrations WHERE identifier = ?", arguments: [identifier]) == 1
            }
        }
    }

    /// The schema as it is now (see ``StoreSchema``).
    package func schemaState() throws -> StoreSchema.State {
        try Self.mapErrors { try queue.read { db in try SQLiteAccess(db: db).schemaState() } }
    }

    private static func pendingMigrations(_ db: Database, upTo identifier: String?) throws -> [SchemaMigration] {
        try migrationHistory(db, upTo: identifier).pending
    }

    /// The migrations this store lacks (up to `identifier`), and the newest it has.
    private static func migrationHistory(_ db: Database, upTo identifier: String?) throws -> (pending: [SchemaMigration], newest: String?) {
        let history = SchemaHistory.migrations
        let wanted = identifier.map { id in Array(history.prefix { $0.identifier <= id }) } ?? history
        guard try db.hasTable("schema_migrations") else { return (wanted, nil) }
        let damaged = CredentialStorageError(.corrupt, "the store's schema history is damaged; restore the store from a backup")
        var applied: Set<String> = []
        try db.cachedStatement(sql: "SELECT identifier FROM schema_migrations").forEachRawRow(values: []) { row in
            guard let identifier = row.text(0) else { throw damaged }
            applied.insert(identifier)
        }
        if let unknown = applied.subtracting(history.map(\.identifier)).sorted().last {
            // A later step than any this build knows ("NNNN_name") is a newer version's work;
            // anything else is damage.
            let known = history.last.flatMap { Int($0.identifier.prefix(4)) } ?? 0
            guard unknown.count > 5, unknown.dropFirst(4).first == "_", let number = Int(unknown.prefix(4)), number > known,
                  unknown.dropFirst(5).allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
            else { throw damaged }
            throw CredentialStorageError(.unsupportedFormatVersion,
                "the store was migrated by a newer credstore (\(unknown)); upgrade credstore to open it")
        }
        return (wanted.filter { !applied.contains($0.identifier) }, applied.max())
    }

    // Our own runner rather than GRDB's DatabaseMigrator: all pending steps run in the caller's
    // one IMMEDIATE transaction, so a kill mid-migration, or two processes opening a new store at
    // once, leave either the old schema or the new one.
    // Internal, not private: ``StoreSchema`` builds the expected schema with this same runner.
    @discardableResult
    package static func migrate(_ db: Database, upTo identifier: String?) throws -> [String] {
        try db.execute(sql: "CREATE TABLE IF NOT EXISTS schema_migrations (identifier TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID")
        let pending = try pendingMigrations(db, upTo: identifier)
        for migration in pending {
            try db.execute(sql: migration.sql)
            try db.execute(sql: "INSERT INTO schema_migrations (identifier) VALUES (?)", arguments: [migration.identifier])
        }
        return pending.map(\.identifier)
    }

    // MARK: Transactions

    /// A read of this process's latest view, without a transaction.
    ///
    /// Inlinable, with ``snapshotRead(_:)`` and ``mapErrors(_:)``: every lookup calls them from the
    /// layer above, where a generic would run unspecialized.
    @inlinable
    package func read<T>(_ body: (any CredentialRepositoryReading) throws -> T) throws -> T {
        try Self.mapErrors {
            // No transaction: a single connection serializes this process's access, and SQLite
            // makes each statement atomic against other processes; reads that need several
            // statements to agree go through `write` or tolerate a change in between.
            try queue.unsafeReentrantRead { db in try body(SQLiteAccess(db: db, prepared: prepared)) }
        }
    }

    /// A consistent read: one snapshot for every statement of `body`.
    @inlinable
    package func snapshotRead<T>(_ body: (any CredentialRepositoryReading) throws -> T) throws -> T {
        try Self.mapErrors {
            try queue.read { db in try body(SQLiteAccess(db: db, prepared: prepared)) }
        }
    }

    /// One atomic transaction that holds the store's write lock across processes; `observer`
    /// hears of every sealed row it writes or deletes, and is asked before the commit. `afterCommit`
    /// runs once the transaction is durable, still serialized with other writes of this process,
    /// so that changes are announced in commit order.
    package func write<T>(
        observer: any RowChangeObserver, _ body: (any CredentialRepositoryWriting) throws -> T, afterCommit: (T) -> Void
    ) throws -> T {
        try Self.mapErrors {
            try queue.writeWithoutTransaction { db in
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(SQLiteAccess(db: db, observer: observer, prepared: prepared))
                    try observer.willCommit()
                    return .commit
                }
                // Deleted bytes leave the WAL now, when the observer asks, or after the first
                // write that finds no other process in the way.
                if observer.emptiesLog || logHoldsRetiredSecrets.withLock({ $0 }) {
                    let emptied = Self.emptyLog(db)
                    logHoldsRetiredSecrets.withLock { $0 = !emptied }
                }
                // Still on the serialized writer: the next transaction cannot commit before
                // this one's changes are handed on.
                afterCommit(result!)
                return result!
            }
        }
    }

    /// ``write(observer:_:afterCommit:)`` with nothing to do after the commit.
    package func write<T>(observer: any RowChangeObserver, _ body: (any CredentialRepositoryWriting) throws -> T) throws -> T {
        try write(observer: observer, body, afterCommit: { _ in })
    }

    /// Runs `body` as ``write(observer:_:afterCommit:)`` would, holding the write lock, and then
    /// rolls the transaction back: nothing it wrote stays, and its result is returned.
    package func writeRolledBack<T>(observer: any RowChangeObserver, _ body: (any CredentialRepositoryWriting) throws -> T) throws -> T {
        try Self.mapErrors {
            try queue.writeWithoutTransaction { db in
                var result: T?
                // The same lock and the same statements as a write, so the outcome is the one a
                // write would have; SQLite then discards every page it changed.
                try db.inTransaction(.immediate) {
                    result = try body(SQLiteAccess(db: db, observer: observer, prepared: prepared))
                    return .rollback
                }
                return result!
            }
        }
    }

    /// A truncating checkpoint, after a write that deleted or replaced a credential: the WAL's
    /// earlier frames hold the old row (its ciphertexts), which would otherwise stay on disk until
    /// SQLite overwrites them. The checkpoint copies the newest pages, where `secure_delete` has
    /// zeroed the old row, into the database file, and then empties the WAL.
    ///
    /// It never waits: while another process reads from the WAL or writes, it gives up and says
    /// so, and ``write(observer:_:afterCommit:)`` tries again after each later write until it succeeds
    /// (the last close deletes the WAL in any case).
    private static func emptyLog(_ db: Database) -> Bool {
        guard let connection = db.sqliteConnection else { return false }
        sqlite3_busy_timeout(connection, 0)
        defer { sqlite3_busy_timeout(connection, Int32(busyTimeout * 1000)) }
        return sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil) == SQLITE_OK
    }

    /// Runs SQLite's own integrity check; returns its complaints (empty when sound).
    package func integrityProblems() throws -> [String] {
        try Self.mapErrors {
            try queue.read { db in
                try String.fetchAll(db, sql: "PRAGMA integrity_check").filter { $0 != "ok" }
            }
        }
    }

    // MARK: Errors

    /// Turns SQLite's errors into the store's error codes, without SQL text or bound values.
    @inlinable
    package static func mapErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw mapped(error)
        }
    }

    /// The store's error for an error of SQLite or GRDB.
    @usableFromInline
    static func mapped(_ error: any Error) -> any Error {
        switch error {
        case let error as CredentialStorageError:
            return error
        case is RowDecodingError:
            // A column of an unexpected type (a NULL where a value must be): damage, not a bug.
            return CredentialStorageError(.corrupt, "the store's database holds a value of the wrong type; verify the store and restore it from a backup")
        case let error as DatabaseError:
            switch error.resultCode {
            case .SQLITE_CORRUPT, .SQLITE_NOTADB, .SQLITE_FORMAT:
                return CredentialStorageError(.corrupt, "the store's database is damaged (\(error.resultCode)); verify the store and restore it from a backup")
            case .SQLITE_BUSY, .SQLITE_LOCKED:
                return CredentialStorageError(.io, "the store stayed locked by another process for \(Int(busyTimeout)) s; retry when it is done")
            case .SQLITE_FULL:
                return CredentialStorageError(.io, "the disk is full; free space and retry")
            case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN, .SQLITE_AUTH:
                return CredentialStorageError(.io, "the store cannot be opened for writing (\(error.resultCode)); check the file and its folder")
            case .SQLITE_CONSTRAINT, .SQLITE_MISMATCH, .SQLITE_ERROR:
                return CredentialStorageError(.corrupt, "the store's schema is not what credstore expects (\(error.resultCode)); verify the store and restore it from a backup")
            default:
                return CredentialStorageError(.io, "the store could not be read or written (\(error.resultCode))")
            }
        default:
            return error
        }
    }
}
