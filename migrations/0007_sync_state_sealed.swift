/// The sync state comes under the table seal: the item and default registers, the hybrid clock and
/// the device identity decide what a merge keeps, so deleting or restoring one of them outside
/// credstore must be as visible as it is for a credential. The seal's rows are hashed by the library
/// (it needs the store's keys), which folds the rows these tables hold into the seal in the same
/// transaction that applies this migration.
///
/// The device table is renamed: every write of the sync state by an earlier version reads the
/// device first (for its clock readings, or to sign and open bundles), so a process of the previous
/// version still running when a newer one migrates the store fails there, and rolls back, instead
/// of writing sync rows it does not fold into the seal (which the next open would report as
/// tampering). Its writes of credentials, default choices and trusted devices fold as before.
let migration0007SyncStateSealed = SchemaMigration(identifier: "0007_sync_state_sealed", sql: """
    ALTER TABLE device RENAME TO device_identity;
    """)
