import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
package import Foundation

extension CredentialStorage {
    /// Keeps what unlocks this passphrase store in the kernel keyring for `seconds`, so that
    /// opening it (``/CredentialStoreCore/StoreKey/unlockedSession``, or any key) needs neither the passphrase nor its
    /// derivation until then; returns when it expires. The time is fixed: use does not extend it.
    ///
    /// - Throws: `invalidInput` for a key-file store (it needs no unlock); `io` when the kernel
    ///   keyring is not available.
    /// The longest an unlock lasts, in seconds: 365 days.
    package static var maximumUnlockSeconds: UInt32 { SessionUnlock.maximumSeconds }

    package func keepUnlocked(forSeconds seconds: UInt32, in keyring: SessionKeyring) throws -> Date {
        guard keyHolder.protection == .passphrase else {
            throw CredentialStorageError(.invalidInput, "this store is unlocked by its key file; only a passphrase store is unlocked for a session")
        }
        guard (1...SessionUnlock.maximumSeconds).contains(seconds) else {
            throw CredentialStorageError(.invalidInput, "an unlock lasts from 1 second to 365 days")
        }
        _ = try followRekey()
        let now = clock.now()
        try SessionUnlock.save(
            kek: keyHolder.kek, storeID: header.storeID, keyGeneration: keyHolder.generation, in: keyring.kernel,
            timeoutSeconds: seconds, now: now)
        return Date(timeIntervalSince1970: Double(now + Int64(seconds) * 1000) / 1000)
    }

    /// The header and key slots of the store at `databaseURL`, read without its key.
    private static func headerAndSlots(at databaseURL: URL) throws -> (StoreHeader, [KeySlot]) {
        guard FileManager.default.fileExists(atPath: databaseURL.path) else {
            throw CredentialStorageError(.notFound, "there is no store at \(databaseURL.path)")
        }
        guard let state = try SQLiteRepository(path: databaseURL.path).openingState().header else {
            throw CredentialStorageError(.corrupt, "\(databaseURL.path) is not a credstore store")
        }
        return state
    }

    /// The store id of the store at `databaseURL`, read from its header without its key.
    static func storeID(at databaseURL: URL) throws -> [UInt8] {
        try headerAndSlots(at: databaseURL).0.storeID
    }

    /// Forgets at once what unlocks the store at `databaseURL` in this session (both keyrings);
    /// whether it was unlocked.
    package static func lock(storeAt databaseURL: URL) throws -> Bool {
        SessionUnlock.forget(storeID: try storeID(at: databaseURL))
    }

    /// Until when the store at `databaseURL` is unlocked in this session; nil when it is not.
    ///
    /// The kept key is tried on the store's passphrase slot (an unwrap, no derivation): a key that
    /// no longer opens it (the passphrase or the key changed, or it was planted) is forgotten and
    /// the store reads as locked, as the next open would find.
    package static func unlockedUntil(storeAt databaseURL: URL) throws -> Date? {
        let (header, slots) = try headerAndSlots(at: databaseURL)
        guard let slot = slots.first(where: { $0.kind == .passphrase }), let cached = SessionUnlock.load(storeID: header.storeID),
              (try? SessionUnlock.unlock(header: header, slot: slot)) != nil else { return nil }
        return Date(timeIntervalSince1970: Double(cached.expires) / 1000)
    }
}
