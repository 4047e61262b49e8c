import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Creates a missing store whole under a temporary name and links it into place, so that every
/// process that finds no store either creates the whole store or opens the one another process
/// created: no process ever finds part of a store at the path, however many start at once.
///
/// 1. The key file, for a key-file store, is linked into place whole first
///    (``StoreFiles/createKeyFile(_:)``); when another process's key file got there first, the
///    store is made for that one.
/// 2. The database is made in a ``StagedFile`` beside the store: WAL mode, every migration, the
///    header, the key slot and the empty table seal, in one transaction. Closing the connection
///    checkpoints the WAL into the file and deletes it; the file is fsync'd.
/// 3. It is linked to the store's name, which fails when a store is there already: then the
///    temporary goes, and the caller opens the store that won. The folder is fsync'd.
/// 4. Holding the folder's lock, the store is recorded as the path's (``StoreRecord``) and then
///    linked; an open takes the same lock before it believes a record that does not match, so no
///    open sees the new store beside the record of one that was deleted.
///
/// A creation that dies leaves only its temporary, which the next creation removes once it is a
/// minute old (``StagedFile/sweep(beside:)``).
enum StoreCreation {
    /// Creates the store at `databaseURL`, which was not there: the store opened, or nil when
    /// another process's store is there now (the caller opens that one).
    static func create(
        databaseURL: URL, key: StoreKey, logger: Logger, anchor: RollbackAnchor, migrateUpTo: String?, clock: any StoreClock
    ) throws -> StoreOpener.Opened? {
        let path = databaseURL.path
        try StoreFiles.refuseOrphanedLog(path)
        StagedFile.sweep(beside: path)
        let header = StoreHeader(
            format: StoreHeader.currentFormat, storeID: Sodium.randomBytes(16), keyGeneration: 1, created: clock.now())
        let root = try SecureBytes.random(count: Sodium.aeadKeyBytes)
        let (slot, kek, createdKeyFile) = try makeSlot(for: key, root: root, header: header)
        let keys = try StoreKeyring(root: root)

        let staged = try StagedFile(for: path)
        do {
            try build(at: staged.path, header: header, slot: slot, keys: keys, migrateUpTo: migrateUpTo, clock: clock)
            try staged.sync()
        } catch {
            staged.discard()
            throw error
        }
        let record = StoreRecord(anchor, databaseURL: databaseURL)
        let published = try StoreFiles.withFolderLock(databaseURL.deletingLastPathComponent().path, exclusive: true) {
            // Every creator puts its store in place holding this lock: one there now won.
            if try StoreFiles.checkExisting(path) {
                staged.discard()
                return false
            }
            // No store is here, so none is replaced: this path's store is now this one. Recorded
            // before it is linked, so that a creation killed in between leaves a record of a store
            // that is not there (the next creation records its own), never a store beside the
            // record of another.
            record?.record(StoreRecord.line(storeID: header.storeID, protection: key.protection))
            guard try staged.publish() else {
                // Put there by something that does not take the lock: its record is made when it
                // is first opened.
                try? record?.forget()
                return false
            }
            return true
        }
        guard published else {
            if let createdKeyFile { removeUnlessItOpens(createdKeyFile, storeAt: path, kek: kek) }
            return nil
        }
        logger.debug("created credential store", metadata: ["path": "\(path)"])

        let repository = try SQLiteRepository(path: path)
        // Replaced in the moment since? Then the caller opens what is there, as any other store.
        guard let (stored, _) = try repository.read({ try $0.header() }), stored == header else { return nil }
        // (Only a test stops the migrations before the seal is a tree.)
        let hasSealTree = try migrateUpTo == nil || repository.hasMigration(TableSealing.treeMigration)
        return StoreOpener.Opened(
            repository: repository, header: header, keys: keys, kek: kek, protection: key.protection,
            anchor: AnchorFile(anchor, storeID: header.storeID, databaseURL: databaseURL), hasSealTree: hasSealTree)
    }

    /// Makes the whole store in the file at `path`, and closes it: the file alone is the store.
    private static func build(
        at path: String, header: StoreHeader, slot: KeySlot, keys: StoreKeyring, migrateUpTo: String?, clock: any StoreClock
    ) throws {
        let repository = try SQLiteRepository(path: path)
        let pipeline = WritePipeline(keys: keys, storeID: header.storeID, clock: clock)
        _ = try repository.create(header: header, slots: [slot], upTo: migrateUpTo, observer: pipeline) { applied, writer in
            if applied.contains(TableSealing.treeMigration) {
                try writer.setTableSeal(TableSealing.empty(keys: keys, storeID: header.storeID))
            } else if applied.contains(TableSealing.migration) {
                // A test that stops the migrations before the tree.
                try writer.setTableSeal(TableSealing.Legacy.sealed(
                    generation: 0, rowCount: 0, digest: [UInt8](repeating: 0, count: TableSealing.Legacy.digestBytes), keys: keys,
                    storeID: header.storeID))
            }
        }
        try repository.close()
        // A WAL would not go with the file when it is linked into place.
        var info = stat()
        if lstat(path + "-wal", &info) == 0, info.st_size > 0 {
            throw CredentialStorageError(.io, "SQLite kept the new store's last pages in its WAL instead of the database; retry")
        }
    }

    /// The new store's key slot for `key` and its key-encryption key (``StoreOpener/makeSlot(for:root:header:creatingStore:)``),
    /// and the key file, when this call created it.
    private static func makeSlot(for key: StoreKey, root: SecureBytes, header: StoreHeader) throws -> (KeySlot, SecureBytes, URL?) {
        if case .keyFile(let url) = key, try !StoreFiles.checkExisting(url.path), let created = try StoreFiles.createKeyFile(url) {
            return (KeySlot.make(kind: .keyFile, kek: created, root: root, header: header), created, url)
        }
        // A key file kept from an earlier store, made by hand, or linked by another process
        // creating this store; or a passphrase.
        let (slot, kek) = try StoreOpener.makeSlot(for: key, root: root, header: header, creatingStore: false)
        return (slot, kek, nil)
    }

    /// Removes the key file this creation made for a store that lost the race, unless it opens
    /// the store that won (which another creator made for it): a key file beside a passphrase
    /// store, or beside a store of another key file, would only mislead.
    private static func removeUnlessItOpens(_ keyFile: URL, storeAt path: String, kek: SecureBytes) {
        guard let repository = try? SQLiteRepository(path: path),
              let (header, slots) = try? repository.read({ try $0.header() })
        else { return }
        let opens = slots.contains { $0.kind == .keyFile && (try? $0.unwrap(kek: kek, header: header)) != nil }
        if !opens { unlink(keyFile.path) }
    }
}
