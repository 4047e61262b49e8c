public import Foundation

/// What keeps a store sound, reached as ``CredentialStorage/maintenance``: verification, key
/// rotation, the passphrase, and backups.
public struct StoreMaintenance: Sendable {
    /// The store this maintains.
    let storage: CredentialStorage

    /// Opens every row and default choice and checks each against its blind indexes; opens the
    /// sync registers, sync defaults, trusted device keys and device identity, and checks that
    /// synchronizable credentials and live sync registers pair up; checks the table seal and the
    /// rollback anchor; then runs SQLite's integrity check.
    ///
    /// Faults are reported, not thrown, so one damaged row does not hide the others.
    /// - Throws: only when the store cannot be read at all.
    public func verify() throws -> VerificationReport {
        try storage.verify()
    }

    /// Whether the store is unlocked by a passphrase (rather than a key file).
    public var isPassphraseProtected: Bool {
        storage.isPassphraseProtected
    }

    /// Changes the passphrase of a passphrase store: rewraps the root key under the new one, in
    /// one transaction. The rows are untouched; other processes keep working.
    ///
    /// - Throws: `wrongKey` when the store uses a key file or `newPassphrase` is empty.
    public func changePassphrase(to newPassphrase: String) throws {
        try storage.changePassphrase(to: newPassphrase)
    }

    /// Rotates the root key: a new random root, every row and default choice re-sealed under its
    /// subkeys, the key slot rewrapped, all in one transaction, so a crash leaves the old store or
    /// the new one. Other processes follow the new key generation on their next access.
    ///
    /// - Throws: `tamperDetected` (and changes nothing) if a row does not open: run ``verify()``.
    public func rekey() throws {
        try storage.rekey()
    }

    /// Writes a consistent, encrypted copy of the whole store to `url` (0600), while other
    /// processes go on reading and writing it.
    ///
    /// The copy is one snapshot of the database (SQLite's `VACUUM INTO`, beside writers in WAL
    /// mode), so a commit of another process is in it whole or not at all. It is checked as
    /// ``verify()`` checks the store, and its key slots are replaced by one passphrase slot that
    /// wraps the same root key under `passphrase`. It is written under a temporary name beside
    /// `url` and renamed into place: `url` never holds half a backup, and an existing file there
    /// is replaced only when the backup is complete.
    ///
    /// Restore it with ``StoreFile/restore(from:passphrase:to:key:logger:rollbackAnchor:confirm:)``.
    ///
    /// - Throws: `wrongKey` for an empty passphrase; `invalidInput` when `url` is one of the
    ///   store's own files; `tamperDetected` or `corrupt` when the store fails verification (no
    ///   backup is written: one could not be restored); `io` when the file cannot be written.
    public func backup(to url: URL, passphrase: String) throws {
        try storage.backup(to: url, passphrase: passphrase)
    }
}

extension CredentialStorage {
    /// Verification, key rotation, the passphrase and backups of this store (``StoreMaintenance``).
    public var maintenance: StoreMaintenance {
        StoreMaintenance(storage: self)
    }
}
