package import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStoreMigrations
import GRDB
import Synchronization

/// The schema a store must have: exactly what its migrations built, no table, index, trigger or
/// view more or less.
///
/// Anyone who can write the file can add to its schema without the key: a trigger that puts a
/// deleted row back (`remove` then reports success while `get` keeps answering), a view or an
/// index that changes what a query sees. Opening compares `sqlite_master` (type, name, table and
/// SQL text of every object) with the schema the migrations build, as one BLAKE2b digest, and
/// refuses anything else with `tamperDetected`.
///
/// The expected digest of the newest migration is compiled in (``pinned``), so that opening a store
/// hashes its own schema and compares, and never rebuilds one. Any other migration (a store that
/// an older version left for this one to migrate, a store made for a test of an older version),
/// or a build whose history has moved past the pinned migration, derives its digest once per
/// process by applying the migrations to an in-memory database, with the same runner that migrates
/// stores.
///
/// **Regenerating** after adding a migration: run
/// `swift test --filter StoreSchemaTests/thePinnedDigestIsWhatTheMigrationsBuild`; it fails and
/// prints the identifier and digest to paste into ``pinned``.
package enum StoreSchema {
    /// The newest migration and the digest of the schema the migrations through it build.
    package static let pinned = (
        migration: "0011_kept_versions",
        digest: "1cc8984d945633774f17795d0d533d9787bea683cdd60e0198a53ff05b97977a"
    )

    /// A store's schema as found: its digest, and the newest migration its history records.
    package struct State: Sendable, Equatable {
        package var digest: [UInt8]
        package var newestMigration: String?
    }

    /// The digest of `sqlite_master`'s rows, whose fields `body` hands to its argument in a fixed
    /// order (nil for NULL).
    package static func digest(_ body: (_ add: (UnsafeBufferPointer<UInt8>?) -> Void) throws -> Void) rethrows -> [UInt8] {
        try Sodium.fieldDigest(body)
    }

    /// `tamperDetected` unless `state` is the schema its newest recorded migration builds.
    package static func check(_ state: State) throws {
        guard let newest = state.newestMigration else { throw tampered }
        guard state.digest == (try expectedDigest(through: newest)) else { throw tampered }
    }

    package static let tampered = CredentialStorageError(.tamperDetected,
        "the store's schema (its tables, indexes, triggers or views) is not the one credstore built: it was edited outside credstore; restore the store from a backup")

    /// The digest of the schema the migrations through `identifier` build.
    package static func expectedDigest(through identifier: String) throws -> [UInt8] {
        if identifier == pinned.migration, SchemaHistory.migrations.last?.identifier == pinned.migration {
            return pinnedDigest
        }
        if let known = derived.withLock({ $0[identifier] }) { return known }
        let digest = try build(through: identifier).digest
        derived.withLock { $0[identifier] = digest }
        return digest
    }

    /// The schema the migrations through `identifier` build, in a new in-memory database.
    package static func build(through identifier: String) throws -> State {
        try SQLiteRepository.mapErrors {
            let queue = try DatabaseQueue()
            try queue.write { db in _ = try SQLiteRepository.migrate(db, upTo: identifier) }
            return try queue.read { db in try SQLiteAccess(db: db).schemaState() }
        }
    }

    private static let pinnedDigest: [UInt8] = {
        let hex = Array(pinned.digest.utf8)
        func value(_ digit: UInt8) -> UInt8 { digit <= UInt8(ascii: "9") ? digit - UInt8(ascii: "0") : digit - UInt8(ascii: "a") + 10 }
        return stride(from: 0, to: hex.count, by: 2).map { value(hex[$0]) << 4 | value(hex[$0 + 1]) }
    }()

    /// Digests derived in this process, by migration.
    private static let derived = Mutex<[String: [UInt8]]>([:])
}
