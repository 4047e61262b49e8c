/// A short log of committed changes, so that other processes on the same store can announce them.
///
/// Rows name the writing instance, so a process skips its own; the subject (space and user) is
/// sealed like every other identifying field. Only the newest entries are kept.
let migration0002ChangeLog = SchemaMigration(identifier: "0002_change_log", sql: """
    CREATE TABLE change_log (
        seq INTEGER PRIMARY KEY,
        writer BLOB NOT NULL,
        pid INTEGER NOT NULL,
        kind INTEGER NOT NULL,
        persistence INTEGER NOT NULL,
        sealed_subject BLOB NOT NULL
    );
    """)
