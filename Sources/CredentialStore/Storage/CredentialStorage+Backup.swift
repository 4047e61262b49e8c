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

/// Backing up a whole store, putting a backup back, and accepting a store put back by hand.
///
/// A backup is itself a complete store, every table of it (permanent and synchronizable
/// credentials with their details, TLS identities and trust, default choices, the device identity
/// and trusted devices, sync state), every field sealed as in the store, and its root key wrapped
/// under a key Argon2id derives from the backup's passphrase: it needs no key file to be restored.
extension CredentialStorage {
    // MARK: Backing up

    /// What ``StoreMaintenance/backup(to:passphrase:)`` does.
    func backup(to url: URL, passphrase: String) throws {
        try StoreFiles.refuseStoreFile(url, database: databaseURL.path, stateFolder: stateFolder, remedy: "write the backup elsewhere")
        try StoreFiles.requireReplaceable(url)
        // Argon2id takes about a second: before the snapshot, so the backup is as fresh as it can be.
        let (kek, salt, cost) = try StoreOpener.passphraseKEK(passphrase)
        StagedFile.sweep(beside: url.path)
        // Created 0600 beside `url`, so the copy is never readable by others, whatever the umask.
        let staged = try StagedFile(for: url.path)
        var written = false
        defer { if !written { staged.discard() } }

        try repository.snapshot(to: staged.path)
        let snapshot = try SQLiteRepository(path: staged.path)
        do {
            try reslot(snapshot, at: URL(fileURLWithPath: staged.path, isDirectory: false), kek: kek, salt: salt, cost: cost)
            try snapshot.close()
        } catch {
            try? snapshot.close()
            throw error
        }
        try staged.sync()
        try staged.replace()
        written = true
        logger.info("backed up the store", metadata: ["file": "\(url.path)"])
    }

    /// Checks the snapshot and replaces its key slots with one passphrase slot for the same root.
    private func reslot(_ snapshot: SQLiteRepository, at url: URL, kek: SecureBytes, salt: [UInt8], cost: Sodium.PasswordHashCost) throws {
        // One file, whole, wherever it is copied: no WAL beside it to forget.
        try snapshot.setJournalMode(.rollback)
        guard let (header, slots) = try snapshot.read({ try $0.header() }),
              let slot = slots.first(where: { $0.kind == keyHolder.protection }) else {
            throw CredentialStorageError(.io, "the store's key slots changed in another process while it was backed up; back it up again")
        }
        let root: SecureBytes
        do {
            root = try slot.unwrap(kek: keyHolder.kek, header: header)
        } catch CredentialStorageError.Code.wrongKey {
            throw CredentialStorageError(.io, "the store's passphrase changed in another process while it was backed up; back it up again")
        }
        let keys = try StoreKeyring(root: root)
        let copy = CredentialStorage(
            databaseURL: url,
            opened: StoreOpener.Opened(repository: snapshot, header: header, keys: keys, kek: keyHolder.kek, protection: keyHolder.protection),
            logger: logger)
        let report = try copy.verify()
        guard report.isSound else {
            throw CredentialStorageError(report.authenticationFailures > 0 ? .tamperDetected : .corrupt,
                "the store fails verification (\(report.problems.count) problem(s), the first: \(report.problems[0])), so no backup was written: it could not be restored; verify the store")
        }
        let newSlot = KeySlot.make(kind: .passphrase, kek: kek, root: root, header: header, salt: salt, cost: cost)
        // Slots are not sealed rows: the seal, and so the snapshot's generation, stay as they are.
        try snapshot.write(observer: WritePipeline(keys: keys, storeID: header.storeID, clock: clock)) { transaction in
            try transaction.replaceSlots([newSlot], header: header)
        }
    }

    // MARK: Restoring

    /// What ``StoreFile/restore(from:passphrase:to:key:logger:rollbackAnchor:confirm:)`` does.
    @discardableResult
    static func restore(
        from backup: URL, passphrase: String, to databaseURL: URL, key: StoreKey, logger: Logger = Logger(label: "credstore"),
        rollbackAnchor: RollbackAnchor = .standard, confirm: (RestoreReport) throws -> Void = { _ in }
    ) throws -> RestoreReport {
        if key.isUnlockedSession {
            throw CredentialStorageError(.locked, "a restored store needs its own key: a key file or a passphrase, not an unlocked session")
        }
        let path = databaseURL.path
        try StoreFiles.refuseStoreFile(backup, database: path, stateFolder: nil, remedy: "a restore replaces that file, so the backup must be elsewhere; nothing was restored")
        try StoreFiles.ensureDirectory(databaseURL.deletingLastPathComponent())
        // The store's files as every open checks them (no links, no one else's files).
        let storeIsThere = try StoreFiles.checkStoreFiles(database: path) && StoreFiles.size(of: path) > 0
        StagedFile.sweep(beside: path)
        let staged = try StagedFile(for: path)
        let temporary = URL(fileURLWithPath: staged.path, isDirectory: false)
        var placed = false
        defer { if !placed { staged.discard() } }
        try StoreFiles.copyFile(backup, into: staged.path)

        let (opened, root, entries) = try openBackup(copy: temporary, of: backup, passphrase: passphrase, logger: logger)
        var report: RestoreReport
        if storeIsThere {
            do {
                // No anchor: a store that was rolled back or put in place of another is compared too.
                let current = try CredentialStorage(at: databaseURL, key: key, logger: logger, rollbackAnchor: .none)
                report = RestoreReport(restored: entries, replacing: try current.entries())
            } catch let error as CredentialStorageError {
                report = RestoreReport(restored: entries, replacing: nil, unreadable: error)
            }
        } else {
            report = RestoreReport(restored: entries, replacing: nil)
        }
        try confirm(report)

        guard let (header, _) = try opened.repository.read({ try $0.header() }) else {
            throw CredentialStorageError(.corrupt, "the copy of the backup lost its header; nothing was restored")
        }
        let (slot, _) = try StoreOpener.makeSlot(for: key, root: root, header: header, creatingStore: true)
        try opened.repository.write(observer: WritePipeline(keys: opened.keys, storeID: header.storeID, clock: SystemClock())) { transaction in
            try transaction.replaceSlots([slot], header: header)
        }
        let generation = try opened.repository.read { try TableSealing.stored($0, keys: opened.keys, storeID: header.storeID).generation }
        // Closed in WAL mode, it is checkpointed whole into its file, and its WAL is gone.
        try opened.repository.setJournalMode(.writeAheadLog)
        try opened.repository.close()
        for suffix in ["-wal", "-journal"] where StoreFiles.size(of: temporary.path + suffix) > 0 {
            throw CredentialStorageError(.io, "the copy of the backup kept a journal file (\(temporary.path + suffix)); nothing was restored")
        }
        unlink(temporary.path + "-shm")
        try staged.sync()

        // The old store's journal files go with it: a WAL left beside the restored database would
        // be replayed onto it, and it would read as the old store again.
        for suffix in StoreFiles.journalSuffixes { unlink(path + suffix) }
        try staged.replace()
        placed = true

        // What `credstore unlock` kept opens the replaced store's slot, not this one's.
        SessionUnlock.forget(storeID: header.storeID)
        StoreRecord(rollbackAnchor, databaseURL: databaseURL)?.record(StoreRecord.line(storeID: header.storeID, protection: key.protection))
        do {
            try AnchorFile(rollbackAnchor, storeID: header.storeID, databaseURL: databaseURL)?.reset(to: generation)
        } catch let error as CredentialStorageError {
            throw CredentialStorageError(.io, "the backup is restored at \(path), but \(error.message); accept it with StoreFile.accept(at:key:)")
        }
        logger.info("restored the store from a backup", metadata: ["path": "\(path)", "backup": "\(backup.path)"])
        return report
    }

    /// Opens the copy of a backup with its passphrase and checks it; its root key and listing.
    private static func openBackup(
        copy: URL, of backup: URL, passphrase: String, logger: Logger
    ) throws -> (opened: StoreOpener.Opened, root: SecureBytes, entries: [CredentialEntry]) {
        let slots: [KeySlot]
        do {
            guard let (_, found) = try SQLiteRepository(path: copy.path).read({ try $0.header() }) else {
                throw CredentialStorageError(.corrupt, "it holds no store")
            }
            slots = found
        } catch let error as CredentialStorageError where error.code == .corrupt || error.code == .io {
            throw CredentialStorageError(.corrupt, "\(backup.path) is not a credstore backup, or it is damaged (\(error.message)); nothing was restored")
        }
        guard slots.contains(where: { $0.kind == .passphrase }) else {
            throw CredentialStorageError(.invalidInput,
                "\(backup.path) is a store unlocked by a key file, not a backup (a backup is locked with its own passphrase); nothing was restored")
        }
        let opened: StoreOpener.Opened
        do {
            // No anchor: the backup is not the store at its path, and is older than it on purpose.
            opened = try StoreOpener.open(databaseURL: copy, key: .passphrase(passphrase), logger: logger, anchor: .none)
        } catch let error as CredentialStorageError where error.code == .wrongKey {
            throw CredentialStorageError(.wrongKey, "the passphrase does not unlock the backup \(backup.path); nothing was restored")
        } catch let error as CredentialStorageError {
            throw CredentialStorageError(error.code, "the backup \(backup.path) was refused, so nothing was restored: \(error.message)")
        }
        let storage = CredentialStorage(databaseURL: copy, opened: opened, logger: logger)
        let report = try storage.verify()
        guard report.isSound else {
            throw CredentialStorageError(report.authenticationFailures > 0 ? .tamperDetected : .corrupt,
                "the backup \(backup.path) fails verification (\(report.problems.count) problem(s), the first: \(report.problems[0])), so nothing was restored")
        }
        guard let (header, current) = try opened.repository.read({ try $0.header() }),
              let slot = current.first(where: { $0.kind == .passphrase }) else {
            throw CredentialStorageError(.corrupt, "the copy of the backup lost its key slot; nothing was restored")
        }
        return (opened, try slot.unwrap(kek: opened.kek, header: header), try storage.entries())
    }

    // MARK: Accepting a store put back by hand

    /// What ``StoreFile/accept(at:key:logger:rollbackAnchor:)`` does.
    @discardableResult
    static func acceptStore(
        at databaseURL: URL, key: StoreKey, logger: Logger = Logger(label: "credstore"), rollbackAnchor: RollbackAnchor = .standard
    ) throws -> CredentialStorage {
        guard try StoreFiles.checkStoreFiles(database: databaseURL.path), StoreFiles.size(of: databaseURL.path) > 0 else {
            throw CredentialStorageError(.notFound, "there is no store at \(databaseURL.path) to accept")
        }
        var opened = try StoreOpener.open(databaseURL: databaseURL, key: key, logger: logger, anchor: .none)
        let storeID = opened.header.storeID
        let (generation, slots) = try opened.repository.snapshotRead { reader in
            (try TableSealing.stored(reader, keys: opened.keys, storeID: storeID).generation, try reader.header()?.1 ?? [])
        }
        let anchor = AnchorFile(rollbackAnchor, storeID: storeID, databaseURL: databaseURL)
        try anchor?.reset(to: generation)
        StoreRecord(rollbackAnchor, databaseURL: databaseURL)?.record(StoreRecord.line(
            storeID: storeID, protection: slots.contains { $0.kind == .passphrase } ? .passphrase : .keyFile))
        opened.anchor = anchor
        opened.sealGeneration = generation
        logger.info("accepted the store as it is", metadata: ["path": "\(databaseURL.path)", "generation": "\(generation)"])
        return CredentialStorage(databaseURL: databaseURL, opened: opened, logger: logger)
    }
}
