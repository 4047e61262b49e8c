/// The versions of synchronizable credentials that lost a concurrent edit to another machine's,
/// kept so that the user can see and restore them (docs/sync-format.md, "Concurrent edits").
///
/// A kept version is sealed like a credential (space, user, password and details are all in
/// `sealed_version`); only its blind indexes and the time it was replaced stay clear, bound into
/// the seal, so that expired versions are found and dropped without opening every row. Its rows
/// are grouped under their space in the seal tree. The table starts empty: nothing was kept before.
let migration0011KeptVersions = SchemaMigration(identifier: "0011_kept_versions", sql: """
    CREATE TABLE kept_versions (
        space_index BLOB NOT NULL,
        user_index BLOB NOT NULL,
        kept INTEGER NOT NULL,
        sealed_version BLOB NOT NULL,
        PRIMARY KEY (space_index, user_index, kept)
    ) WITHOUT ROWID;
    CREATE INDEX kept_versions_by_time ON kept_versions (kept);
    """)
