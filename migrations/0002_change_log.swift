/// A short log of committed changes, so that other processes on the same store can announce them.
///
/// Rows name the writing instance, so a process skips its own; the subject (space and user) is
/// sealed like every other identifying field. Entries are kept for a minute (and the newest
/// thousand always), far longer than a watcher polling a few times a second can fall behind.
let migration0002ChangeLog = SchemaMigration(identifier: "0002_change_log", sql: """
    CREATE TABLE change_log (
        seq INTEGER PRIMARY KEY,
        writer BLOB NOT NULL,
        pid INTEGER NOT NULL,
        kind INTEGER NOT NULL,
        persistence INTEGER NOT NULL,
        written INTEGER NOT NULL,
        sealed_subject BLOB NOT NULL
    );

    CREATE INDEX change_log_by_time ON change_log (written);
    """)
