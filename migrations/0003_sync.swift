/// Sync between machines: this store's device identity, the devices it trusts, its hybrid logical
/// clock, and the last-writer-wins state of every synchronizable item and default choice.
///
/// Item and default states are sealed like credentials (space and user are identifying); only the
/// tombstone flag and the wall time stay clear, bound into the seal, so old tombstones can be
/// found and dropped without opening every row.
let migration0003Sync = SchemaMigration(identifier: "0003_sync", sql: """
    CREATE TABLE device (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        device_id BLOB NOT NULL,
        public_key BLOB NOT NULL,
        sealed_secret_key BLOB NOT NULL
    );

    CREATE TABLE trusted_devices (
        key_index BLOB PRIMARY KEY NOT NULL,
        sealed_public_key BLOB NOT NULL
    ) WITHOUT ROWID;

    CREATE TABLE sync_clock (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        wall INTEGER NOT NULL,
        counter INTEGER NOT NULL
    );

    CREATE TABLE sync_items (
        space_index BLOB NOT NULL,
        user_index BLOB NOT NULL,
        deleted INTEGER NOT NULL,
        wall INTEGER NOT NULL,
        sealed_state BLOB NOT NULL,
        PRIMARY KEY (space_index, user_index)
    ) WITHOUT ROWID;

    CREATE TABLE sync_defaults (
        space_index BLOB PRIMARY KEY NOT NULL,
        sealed_state BLOB NOT NULL
    ) WITHOUT ROWID;
    """)
