/// The change log keeps one entry per transaction instead of one per change: the changes a
/// transaction makes are sealed together, up to `SQLiteAccess.changeLogBatchSize` to an entry.
/// An import of 100,000 items wrote 200,000 entries, each with its own seal, nonce and B-tree
/// cell (a third of the store's size, and an eighth of the import's time); it now writes 196.
///
/// The kind and tier of each change move inside the seal. Entries are kept a minute at most, and
/// nothing but a watcher reads them, so the old ones are dropped rather than converted: a store
/// is migrated when it is opened, before this process's watcher starts, and a process running
/// the previous version cannot open the migrated store anyway.
let migration0006ChangeLogByTransaction = SchemaMigration(identifier: "0006_change_log_by_transaction", sql: """
    DROP TABLE change_log;

    CREATE TABLE change_log (
        seq INTEGER PRIMARY KEY,
        writer BLOB NOT NULL,
        pid INTEGER NOT NULL,
        written INTEGER NOT NULL,
        sealed_changes BLOB NOT NULL
    );
    """)
