/// The table seal becomes a tree, so that every lookup can check its own answer against it and
/// opening a store checks only the root (docs/architecture.md, "The seal tree").
///
/// `seal_nodes` holds the tree: its interior nodes (the digests of their children) and its
/// buckets (the digest and row count of each group of rows a lookup reads together: a space's
/// credentials and default choice, an origin's credentials, a space's sync registers, …). The
/// seal's row keeps the generation, the row count and a MAC, now over the tree's root.
///
/// The seal's table is renamed: every open and every write of an earlier version reads or writes
/// `table_seal`, so a process of the previous version still running when a newer one migrates the
/// store fails there, and rolls back, instead of folding a row into the old digest. The library
/// builds the tree from the rows, once it has checked them against the old seal, in the same
/// transaction that applies this migration.
let migration0008SealTree = SchemaMigration(identifier: "0008_seal_tree", sql: """
    ALTER TABLE table_seal RENAME TO store_seal;
    CREATE TABLE seal_nodes (
        -- The level (0 the root, 3 the buckets) in the high 32 bits, the position in the low.
        id INTEGER PRIMARY KEY,
        body BLOB NOT NULL
    );
    """)
