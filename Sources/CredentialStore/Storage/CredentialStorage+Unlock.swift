import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
package import Foundation

/// Where `credstore unlock` keeps what unlocks a passphrase store.
package enum SessionKeyring: String, CaseIterable, Sendable {
    /// This login session's keyring: the shell, and whatever it starts.
    case session
    /// The user's keyring: every session of the user on this machine.
    case user

    var kernel: KernelKeyring.Keyring { self == .session ? .session : .user }
}

extension CredentialStorage {
    /// Keeps what unlocks this passphrase store in the kernel keyring for `seconds`, so that
    /// opening it (``/CredentialStoreCore/StoreKey/unlockedSession``, or any key) needs neither the passphrase nor its
    /// derivation until then; returns when it expires. The time is fixed: use does not extend it.
    ///
    /// - Throws: `invalidInput` for a key-file store (it needs no unlock); `io` when the kernel
    ///   keyring is not available.
    package func keepUnlocked(forSeconds seconds: UInt32, in keyring: SessionKeyring) throws -> Date {
        guard keyHolder.protection == .passphrase else {
            throw CredentialStorageError(.invalidInput, "this store is unlocked by its key file; only a passphrase store is unlocked for a session")
        }
        _ = try followRekey()
        let now = clock.now()
        try SessionUnlock.save(
            kek: keyHolder.kek, storeID: header.storeID, keyGeneration: keyHolder.generation, in: keyring.kernel,
            timeoutSeconds: seconds, now: now)
        return Date(timeIntervalSince1970: Double(now + Int64(seconds) * 1000) / 1000)
    }

    /// The store id of the store at `databaseURL`, read from its header without its key.
    private static func storeID(at databaseURL: URL) throws -> [UInt8] {
        guard FileManager.default.fileExists(atPath: databaseURL.path) else {
            throw CredentialStorageError(.notFound, "there is no store at \(databaseURL.path)")
        }
        guard let (header, _) = try SQLiteRepository(path: databaseURL.path).openingState().header else {
            throw CredentialStorageError(.corrupt, "\(databaseURL.path) is not a credstore store")
        }
        return header.storeID
    }

    /// Forgets at once what unlocks the store at `databaseURL` in this session (both keyrings);
    /// whether it was unlocked.
    package static func lock(storeAt databaseURL: URL) throws -> Bool {
        SessionUnlock.forget(storeID: try storeID(at: databaseURL))
    }

    /// Until when the store at `databaseURL` is unlocked in this session; nil when it is not.
    /// (Whether the kept key still matches the store's passphrase shows at the next open.)
    package static func unlockedUntil(storeAt databaseURL: URL) throws -> Date? {
        SessionUnlock.load(storeID: try storeID(at: databaseURL)).map { Date(timeIntervalSince1970: Double($0.expires) / 1000) }
    }
}
