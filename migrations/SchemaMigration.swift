/// One step of the store's schema history.
///
/// The history is forward-only: a migration, once released, is never edited or removed; a change
/// is a new migration with the next number. The SQL lives in Swift files so that the `credstore`
/// binary carries it and needs no resource bundle at run time.
package struct SchemaMigration: Sendable {
    /// The number and name, e.g. `0001_initial`; migrations run in this order.
    package let identifier: String
    /// The statements, run in one transaction.
    package let sql: String
}

/// Every migration, oldest first.
package enum SchemaHistory {
    package static let migrations: [SchemaMigration] = [
        migration0001Initial,
        migration0002ChangeLog,
        migration0003Sync,
        migration0004TableSeal,
        migration0005ChangeLogBySequence,
        migration0006ChangeLogByTransaction,
        migration0007SyncStateSealed,
        migration0008SealTree,
        migration0009CredentialDetails,
        migration0010CredentialTags,
        migration0011KeptVersions,
    ]
}
