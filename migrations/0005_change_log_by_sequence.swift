/// The change log is pruned from its head, in sequence order (see SQLiteAccess.pruneChangeLog), so
/// its index on `written` has nothing left to do but cost every write one more page in the WAL.
let migration0005ChangeLogBySequence = SchemaMigration(identifier: "0005_change_log_by_sequence", sql: """
    DROP INDEX change_log_by_time;
    """)
