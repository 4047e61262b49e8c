import CredentialStoreMigrations
import Foundation
import GRDB
import Logging
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// The schema history is forward-only, and a store made by an older version opens with all its data.
@Suite struct MigrationTests {
    @Test func aStoreMadeWithTheFirstMigrationOnlyOpensWithEverythingInIt() throws {
        let store = try TemporaryStore()
        let first = SchemaHistory.migrations[0].identifier
        let space = Fixture.space(realm: "Legacy")
        do {
            // As the first release wrote it: only the first migration, rows and a default choice.
            let opened = try StoreOpener.open(
                databaseURL: store.databaseURL, key: .keyFile(store.keyFileURL), logger: Logger(label: "test"), migrateUpTo: first)
            let applied = try store.rawDatabase().read {
                try String.fetchAll($0, sql: "SELECT identifier FROM schema_migrations")
            }
            #expect(applied == [first])
            #expect(try store.rawDatabase().read { try $0.tableExists("change_log") } == false)
            let spaceIndex = opened.keys.spaceIndex(space)
            try opened.repository.write(observer: WrittenOutsideTheSeal()) { writer in
                for (user, password) in [("alice", "a-pw"), ("bob", "b-pw")] {
                    try writer.upsert(opened.keys.encrypt(
                        Credential(user: user, password: password, persistence: .permanent),
                        in: space, spaceIndex: spaceIndex, created: 1, modified: 1))
                }
                try writer.setDefaultChoice(opened.keys.encryptDefault(user: "bob", spaceIndex: spaceIndex))
            }
        }

        let storage = try store.open()
        #expect(try storage.credentials(for: space) == [
            "alice": Fixture.credential("alice", "a-pw"), "bob": Fixture.credential("bob", "b-pw"),
        ])
        #expect(try storage.defaultCredential(for: space)?.user == "bob")
        let applied = try store.rawDatabase().read {
            try String.fetchAll($0, sql: "SELECT identifier FROM schema_migrations ORDER BY identifier")
        }
        #expect(applied == SchemaHistory.migrations.map(\.identifier))
        // And the migrated store takes new writes.
        try storage.set(Fixture.credential("carol", "c-pw"), for: space)
        #expect(try store.open().credentials(for: space).count == 3)
    }

    @Test func migrationIdentifiersAreNumberedAndInOrder() {
        let identifiers = SchemaHistory.migrations.map(\.identifier)
        #expect(identifiers == identifiers.sorted())
        #expect(Set(identifiers).count == identifiers.count)
        for (offset, identifier) in identifiers.enumerated() {
            #expect(identifier.hasPrefix(String(format: "%04d_", offset + 1)))
        }
    }

    @Test func aStoreMigratedByANewerVersionIsRefused() throws {
        let store = try TemporaryStore()
        do { try store.open().set(Fixture.credential("alice"), for: Fixture.space()) }
        try store.rawDatabase().write {
            try $0.execute(sql: "INSERT INTO schema_migrations (identifier) VALUES ('9999_from_the_future')")
        }
        expectError(.unsupportedFormatVersion) { try store.open() }
    }
}

/// Migration 0007: a store whose seal covered credentials, default choices and trusted devices
/// gets its sync state folded in, without a recomputation that would launder earlier tampering.
@Suite struct SyncStateSealMigrationTests {
    let store = try! TemporaryStore()
    let space = Fixture.space(realm: "Synced")
    static let before = "0006_change_log_by_transaction"

    /// Makes the store as version 0006 left it: credentials and defaults folded into the seal,
    /// sync registers, clock and device outside it. Among the registers, what 0006 tolerated: a
    /// synchronizable credential stored before sync existed (no register), and a live register
    /// whose credential is gone.
    private func makeVersion6Store(tamperedCredentials: Bool = false) throws -> (opened: StoreOpener.Opened, stamp: HybridTimestamp) {
        let opened = try StoreOpener.open(
            databaseURL: store.databaseURL, key: .keyFile(store.keyFileURL), logger: Logger(label: "test"), migrateUpTo: Self.before)
        let keys = opened.keys
        let deviceID = Sodium.randomBytes(DeviceIdentity.idBytes)
        let (publicKey, secretKey) = try Sodium.signingKeyPair()
        let stamp = HybridTimestamp(wall: SystemClock().now() - 60_000, counter: 3, device: deviceID)
        let pipeline = WritePipeline(keys: keys, storeID: opened.header.storeID, clock: SystemClock())
        try opened.repository.write(observer: pipeline) { writer in
            let spaceIndex = keys.spaceIndex(space)
            for (user, persistence) in [("perm", Persistence.permanent), ("carol", .synchronizable), ("legacy", .synchronizable)] {
                try writer.upsert(keys.encrypt(Credential(user: user, password: "\(user)-pw", persistence: persistence),
                                            in: space, spaceIndex: spaceIndex, created: 1, modified: 1))
            }
            try writer.setDefaultChoice(keys.encryptDefault(user: "carol", spaceIndex: spaceIndex))
            // Version 0006's seal: the XOR over these rows.
            pipeline.discardRowChanges()
            try writer.setTableSeal(TableSealing.Legacy.compute(
                writer, keys: keys, storeID: opened.header.storeID, generation: 1, tables: SealedRowFingerprint.Table.sinceTableSeal))
            // Version 0006 wrote these outside the seal.
            try writer.setSyncClock(wall: stamp.wall, counter: stamp.counter)
            try writer.upsertSyncItem(keys.encrypt(SyncItemState(space: space, user: "carol", stamp: stamp, deleted: false)))
            try writer.upsertSyncItem(keys.encrypt(SyncItemState(space: space, user: "orphan", stamp: stamp, deleted: false)))
            try writer.upsertSyncItem(keys.encrypt(SyncItemState(space: space, user: "gone", stamp: stamp, deleted: true)))
            try writer.upsertSyncDefault(keys.encrypt(SyncDefaultState(space: space, user: "carol", stamp: stamp)))
            pipeline.discardRowChanges()
        }
        try store.rawDatabase().write { db in
            try db.execute(sql: "INSERT INTO device (id, device_id, public_key, sealed_secret_key) VALUES (1, ?, ?, ?)", arguments: [
                Data(deviceID), Data(publicKey), Data(keys.encryptDeviceSecret(secretKey, deviceID: deviceID, publicKey: publicKey)),
            ])
            if tamperedCredentials { try db.execute(sql: "DELETE FROM default_choices") }
        }
        return (opened, stamp)
    }

    @Test func aVersion6StoreMigratesWithItsSyncStateSealedAndPaired() throws {
        let stamp = try makeVersion6Store().stamp
        let storage = try store.open()
        #expect(try storage.maintenance.verify().isSound)
        #expect(try storage.sync.deviceID == stamp.device.map { String(format: "%02x", $0) }.joined(), "the device identity survives the rename")
        // The synchronizable credential stored before sync existed now has a live register, newer
        // than anything before the migration, so it is exported; the register left without its
        // credential is a tombstone with its own reading, which deletes nothing newer elsewhere.
        let legacy = try #require(try syncRegister(storage, space, "legacy"))
        #expect(!legacy.deleted && legacy.stamp > stamp)
        let orphan = try #require(try syncRegister(storage, space, "orphan"))
        #expect(orphan.deleted && orphan.stamp == stamp)
        #expect(try syncRegister(storage, space, "carol") == SyncItemState(space: space, user: "carol", stamp: stamp, deleted: false))
        let peer = try SyncPeer()
        try storage.sync.trust(try peer.publicKey)
        try peer.storage.sync.trust(try storage.sync.deviceKey)
        let bundle = peer.file("from-migrated.csbundle")
        try storage.sync.export(to: bundle, protection: .recipients([try peer.publicKey]))
        #expect(try peer.storage.sync.importBundle(from: bundle) == ImportReport(added: 2, unchanged: 2))
        #expect(try peer.storage.credentials(for: space).mapValues(\.password) == ["carol": "carol-pw", "legacy": "legacy-pw"])
        // And it keeps working: a write, a reopen.
        try storage.set(Credential(user: "carol", password: "carol-2", persistence: .synchronizable), for: space)
        #expect(try store.open().maintenance.verify().isSound)
    }

    @Test func aRolledBackStoreIsNotMadeCurrentByTheMigration() throws {
        let (opened, _) = try makeVersion6Store()
        // The copy's seal is at generation 2 once migration 0007 folded the sync state in; the
        // anchor saw 3, the generation the tree would get: without the check the upgrade would
        // make this older copy current, level with the anchor.
        AnchorFile(.directory(store.anchorDirectory), storeID: opened.header.storeID, databaseURL: store.databaseURL)?.advance(to: 3)
        expectError(.tamperDetected) { try store.open() }
        #expect(try store.rawDatabase().read { try String.fetchOne($0, sql: "SELECT max(identifier) FROM schema_migrations") } == Self.before)
    }

    @Test func tamperingBeforeTheMigrationStaysDetected() throws {
        _ = try makeVersion6Store(tamperedCredentials: true)
        // Migration 0008 checks the rows against the old seal before it builds the tree over them,
        // and refuses (whatever the open's own check): a tree would launder the deletion.
        expectError(.tamperDetected) { try store.open() }
        expectError(.tamperDetected) { try store.open(integrityCheck: .deferredToVerify) }
        // Nothing was migrated: the store is still as version 0006 left it.
        #expect(try store.rawDatabase().read { try String.fetchOne($0, sql: "SELECT max(identifier) FROM schema_migrations") } == Self.before)
    }
}

/// Rows written as a version without (part of) the table seal wrote them: nothing folds them in.
private final class WrittenOutsideTheSeal: RowChangeObserver {
    func rowRemoved(_ row: SealedRowFingerprint) {}
    func rowAdded(_ row: SealedRowFingerprint) {}
    func keySlotsRemoved() {}
    func willCommit() throws {}
    var emptiesLog: Bool { false }
}
