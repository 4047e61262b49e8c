/// The change log keeps one entry per transaction instead of one per change: the changes a
/// transaction makes are sealed together, up to `Mutation.changeLogBatchSize` to an entry. An
/// import of 100,000 items wrote 200,000 entries, each with its own seal, nonce and B-tree cell (a
/// third of the store's size, and an eighth of the import's time); it now writes 196.
///
/// The new log is a table of its own, `change_entries`. The kind and tier of each change move
/// inside the seal; `change_total` counts the changes logged up to and including the entry, so that
/// pruning keeps the newest thousand changes rather than the newest thousand entries, which may
/// now hold a thousand changes each.
///
/// `change_log` stays as it is, for a process of the previous version that has the store open
/// while this one migrates it: its writes still go there instead of failing. Nothing of this
/// version reads it, and a later migration drops it.
let migration0006ChangeLogByTransaction = SchemaMigration(identifier: "0006_change_log_by_transaction", sql: """
    CREATE TABLE change_entries (
        seq INTEGER PRIMARY KEY,
        writer BLOB NOT NULL,
        pid INTEGER NOT NULL,
        written INTEGER NOT NULL,
        change_total INTEGER NOT NULL,
        sealed_changes BLOB NOT NULL
    );
    """)
