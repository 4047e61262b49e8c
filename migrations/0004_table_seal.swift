/// The table seal: a keyed MAC over the set of rows in the credential, default-choice and
/// trusted-device tables.
///
/// Each row's ciphertexts already bind it to its own clear columns, which catches an edit inside a
/// row; the seal catches what row-level authentication cannot: a row deleted, an older copy of a
/// row restored, a row copied in from another store. The library fills the row in (it needs the
/// store's keys) in the same transaction that applies this migration.
let migration0004TableSeal = SchemaMigration(identifier: "0004_table_seal", sql: """
    CREATE TABLE table_seal (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        -- Goes up with every transaction that changes a sealed row: the rollback anchor's counter.
        generation INTEGER NOT NULL,
        row_count INTEGER NOT NULL,
        -- XOR of a keyed 16-byte hash of each row's key and authentication tags.
        digest BLOB NOT NULL,
        -- Keyed BLAKE2b over the store id, generation, row count and digest.
        mac BLOB NOT NULL
    );
    """)
