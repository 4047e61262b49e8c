public import CredentialStoreCore
public import Foundation
public import Logging

/// What acts on a store's files whether or not the store is open: which key protects it,
/// accepting a store put at its path on purpose, restoring a backup, and sealing key files to
/// this machine.
public enum StoreFile {
    /// How the store at `databaseURL` is unlocked, read from its header without any key; nil when
    /// no store exists there yet. Lets a tool decide whether to ask for a passphrase.
    public static func protection(ofStoreAt databaseURL: URL) throws -> StoreProtection? {
        try CredentialStorage.protection(ofStoreAt: databaseURL)
    }

    /// Forgets which store was last seen at `databaseURL`, so that the next open accepts the store
    /// that is there now and remembers it instead.
    ///
    /// Opening a store that is not the one last opened at its path (another store id, or a key-file
    /// store where a passphrase store was) throws `tamperDetected`: someone may have swapped the
    /// file for one whose key they know, to collect what is saved next. Call this only when you
    /// replaced the store yourself (`credstore init --force` does).
    public static func forgetRecordedStore(at databaseURL: URL, rollbackAnchor: RollbackAnchor = .standard) throws {
        try CredentialStorage.forgetRecordedStore(at: databaseURL, rollbackAnchor: rollbackAnchor)
    }

    /// Puts the store backed up in `backup` at `databaseURL`, in place of whatever store is
    /// there, and accepts it as that path's store.
    ///
    /// The backup is copied beside `databaseURL` under a temporary name, opened with
    /// `passphrase` and checked as ``StoreMaintenance/verify()`` checks a store; a backup that fails is refused and
    /// nothing changes. The store at `databaseURL`, if any, is opened with `key` and compared with
    /// the backup (``RestoreReport``), and `confirm` is called with the comparison: throwing from
    /// it stops the restore, with nothing changed. Then the copy's key slot is replaced by one for
    /// `key` (a key file that does not exist yet is created), and the copy is renamed over the
    /// store, whose journal files are removed with it, so that no write-ahead log of the old store
    /// is replayed onto the restored one. Finally the restored store is recorded as this path's
    /// store and its rollback anchor is set back to the backup's state, so that it opens as any
    /// store does (``accept(at:key:logger:rollbackAnchor:)`` does the same for a copy put
    /// back by hand).
    ///
    /// The restored store keeps the backup's store id and device identity. A process that has
    /// the replaced store open keeps working on it, not on the restored one, and its next commit
    /// would make the restored store read as rolled back: stop such processes first.
    ///
    /// - Parameters:
    ///   - backup: A file ``StoreMaintenance/backup(to:passphrase:)`` wrote.
    ///   - passphrase: The backup's passphrase.
    ///   - databaseURL: Where the restored store goes.
    ///   - key: What unlocks the restored store: a key file (the store's own; created when missing)
    ///     or a passphrase (a new slot under it). Not ``/CredentialStoreCore/StoreKey/unlockedSession``.
    ///   - logger: Where the restore logs what it did (never a secret).
    ///   - rollbackAnchor: The anchors of `databaseURL`'s store, which accept the restored one.
    ///   - confirm: Called with what the restore replaces, before anything changes; throw to stop.
    /// - Returns: What was restored and what it replaced.
    /// - Throws: `wrongKey` for a passphrase that does not open the backup; `tamperDetected` or
    ///   `corrupt` for a backup that fails its checks, or a file that is not a backup;
    ///   `invalidInput` for a key-file store given as a backup; `locked` for an unlocked-session
    ///   key; whatever `confirm` throws; `permissionsTooOpen` and `io` for the store's files.
    @discardableResult
    public static func restore(
        from backup: URL, passphrase: String, to databaseURL: URL, key: StoreKey, logger: Logger = Logger(label: "credstore"),
        rollbackAnchor: RollbackAnchor = .standard, confirm: (RestoreReport) throws -> Void = { _ in }
    ) throws -> RestoreReport {
        try CredentialStorage.restore(
            from: backup, passphrase: passphrase, to: databaseURL, key: key, logger: logger, rollbackAnchor: rollbackAnchor, confirm: confirm)
    }

    /// Accepts the store now at `databaseURL` as that path's store, in the state it is in, once
    /// it opens with `key`, and returns it open.
    ///
    /// Every open refuses (`tamperDetected`) a store older than its rollback anchor (an older copy
    /// of the file put back) and a store other than the one last opened at its path (another
    /// store copied over it): someone may have done so to bring back a revoked password, or to
    /// collect what is saved next under their key. Call this only when you did it yourself, on
    /// purpose (`credstore init --force` does): the path's record becomes this store, and its
    /// anchor this store's state, from which it follows the store's history again. The store's
    /// seal is checked as any open checks it; ``StoreMaintenance/verify()`` checks every row.
    ///
    /// - Throws: `notFound` when no store is there; the errors of
    ///   ``CredentialStorage/init(at:key:options:)`` other than the anchor's and the
    ///   record's; `io` when the anchor cannot be written.
    @discardableResult
    public static func accept(
        at databaseURL: URL, key: StoreKey, logger: Logger = Logger(label: "credstore"), rollbackAnchor: RollbackAnchor = .standard
    ) throws -> CredentialStorage {
        try CredentialStorage.acceptStore(at: databaseURL, key: key, logger: logger, rollbackAnchor: rollbackAnchor)
    }

    /// Creates a key file at `url` that only this machine can open: a fresh random key sealed by
    /// `seal`, never written in the clear. Open the store with ``/CredentialStoreCore/StoreKey/keyFile(_:)``
    /// as usual; reading the key file unseals it.
    ///
    /// - Throws: ``/CredentialStoreCore/CredentialStorageError/Code/unavailable`` when the sealing
    ///   tool is missing or not allowed here (before systemd 256, only root can use the host key),
    ///   with what to do instead; ``/CredentialStoreCore/CredentialStorageError/Code/io`` when a
    ///   key file is already at `url`.
    public static func createSealedKeyFile(at url: URL, sealedWith seal: KeyFileSeal = .systemdCreds) throws {
        try CredentialStorage.createSealedKeyFile(at: url, sealedWith: seal)
    }

    /// Seals the plain key file at `url` in place, so that it opens its store on this machine only;
    /// returns false when it is sealed already.
    ///
    /// The file is replaced through a rename. The plain key it held may survive in the disk's free
    /// blocks, a snapshot or a backup: a store that must never have had a plain key is created with
    /// ``createSealedKeyFile(at:sealedWith:)``.
    @discardableResult
    public static func sealKeyFile(at url: URL, with seal: KeyFileSeal = .systemdCreds) throws -> Bool {
        try CredentialStorage.sealKeyFile(at: url, with: seal)
    }

    /// What seals the key file at `url`: nil for a plain key file, or one that cannot be read.
    public static func keyFileSeal(at url: URL) -> KeyFileSeal? {
        CredentialStorage.keyFileSeal(at: url)
    }
}
