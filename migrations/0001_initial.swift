/// The store: a header with key slots, sealed credentials behind blind indexes, default choices.
///
/// Clear columns are only what lookups and ordering need (blind indexes, tier, timestamps); every
/// ciphertext binds them all as associated data, so editing one is detected. User and password are
/// sealed together: a lookup opens one ciphertext.
let migration0001Initial = SchemaMigration(identifier: "0001_initial", sql: """
    CREATE TABLE store_header (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        format INTEGER NOT NULL,
        store_id BLOB NOT NULL,
        key_generation INTEGER NOT NULL,
        created INTEGER NOT NULL
    );

    CREATE TABLE key_slots (
        kind TEXT PRIMARY KEY NOT NULL,
        kdf_salt BLOB,
        kdf_opslimit INTEGER,
        kdf_memlimit INTEGER,
        commitment BLOB NOT NULL,
        wrapped_root_key BLOB NOT NULL
    );

    -- One row per (space, user). WITHOUT ROWID: a lookup by space is one B-tree descent.
    CREATE TABLE credentials (
        space_index BLOB NOT NULL,
        user_index BLOB NOT NULL,
        origin_index BLOB NOT NULL,
        persistence INTEGER NOT NULL,
        created INTEGER NOT NULL,
        modified INTEGER NOT NULL,
        sealed_space BLOB NOT NULL,
        sealed_credential BLOB NOT NULL,
        PRIMARY KEY (space_index, user_index)
    ) WITHOUT ROWID;

    CREATE INDEX credentials_by_origin ON credentials (origin_index);

    -- The default of a space, held by user so that a password update never leaves it stale.
    CREATE TABLE default_choices (
        space_index BLOB PRIMARY KEY NOT NULL,
        user_index BLOB NOT NULL,
        sealed_user BLOB NOT NULL
    ) WITHOUT ROWID;
    """)
