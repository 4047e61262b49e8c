import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence

/// What `credstore unlock` keeps in the kernel keyring so that a passphrase store opens without
/// its passphrase, and without the Argon2id derivation, for a while (docs/security.md, "Unlocked
/// sessions").
///
/// The key is named `credstore:` and the store id in hex, so it can never open another store; its
/// payload is the key-encryption key the passphrase derives, with the store's key generation and
/// the time it expires. A `passwd` (new slot, new commitment) or a `rekey` (new generation) makes
/// it stale: the opener finds it does not unlock the slot, invalidates it, and reports
/// ``CredentialStorageError/Code/locked``.
enum SessionUnlock {
    private static let magic: [UInt8] = Array("CSU1".utf8)
    private static let payloadBytes = 4 + 8 + 8 + Sodium.aeadKeyBytes

    /// The longest an unlock lasts: 365 days. The kernel's key timeout takes it, and a key read
    /// back that claims to last longer (from now) was not written by an unlock.
    static let maximumSeconds: UInt32 = 365 * 86_400

    static func description(storeID: [UInt8]) -> String {
        "credstore:" + storeID.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }

    /// What a key holds, once read and checked.
    struct Cached {
        var kek: SecureBytes
        var keyGeneration: Int64
        /// When the kernel drops it, ms since 1970.
        var expires: Int64
        var serial: Int32
    }

    /// Keeps `kek` for the store in `keyring` for `timeoutSeconds`, replacing the key kept for it
    /// before only once the new one is in place (the other keyring's too: the search would find
    /// that one first); on failure the earlier key stays as it was.
    static func save(
        kek: SecureBytes, storeID: [UInt8], keyGeneration: Int64, in keyring: KernelKeyring.Keyring, timeoutSeconds: UInt32, now: Int64
    ) throws {
        var payload = ByteWriter(capacity: payloadBytes)
        defer { payload.wipe() }
        payload.append(raw: magic)
        payload.append(keyGeneration)
        payload.append(now + Int64(timeoutSeconds) * 1000)
        kek.withUnsafeBytes { payload.append(raw: $0) }
        try KernelKeyring.store(payload.bytes, description: description(storeID: storeID), in: keyring, timeout: timeoutSeconds)
    }

    /// The key kept for the store, if there is one this process possesses and it has not expired.
    ///
    /// A key under the store's name that is not one `credstore unlock` wrote (another length, another
    /// magic, past its own expiry: planted, or left by another version) is invalidated, and the
    /// store reads as locked.
    static func load(storeID: [UInt8], now: Int64 = SystemClock().now()) -> Cached? {
        guard let serial = KernelKeyring.find(description(storeID: storeID)) else { return nil }
        let cached = KernelKeyring.read(serial).flatMap { bytes in
            bytes.withUnsafeBytes { raw -> Cached? in
                guard raw.count == payloadBytes, Array(raw[0..<4]) == magic else { return nil }
                var reader = ByteReader(UnsafeRawBufferPointer(rebasing: raw[4..<20]))
                guard let generation = try? reader.readInt64(), let expires = try? reader.readInt64(), expires > now,
                      expires - now <= Int64(maximumSeconds) * 1000 + 60_000,
                      let kek = try? SecureBytes(copying: UnsafeRawBufferPointer(rebasing: raw[20...]))
                else { return nil }
                return Cached(kek: kek, keyGeneration: generation, expires: expires, serial: serial)
            }
        }
        if cached == nil { KernelKeyring.remove(serial) }
        return cached
    }

    /// Forgets every key kept for the store (both keyrings); whether there was one.
    @discardableResult
    static func forget(storeID: [UInt8]) -> Bool {
        var found = false
        // One key a keyring at most; bounded all the same, should a key refuse to go.
        for _ in 0..<4 {
            guard let serial = KernelKeyring.find(description(storeID: storeID)) else { break }
            KernelKeyring.remove(serial)
            found = true
        }
        return found
    }

    /// The root key from the passphrase slot, unwrapped with the kept key; nil when there is none.
    /// - Throws: ``CredentialStorageError/Code/locked`` when the kept key is stale (the store's key
    ///   generation or passphrase changed since), after invalidating it.
    static func unlock(header: StoreHeader, slot: KeySlot) throws -> (root: SecureBytes, kek: SecureBytes)? {
        guard let cached = load(storeID: header.storeID) else { return nil }
        guard cached.keyGeneration == header.keyGeneration, let root = try? slot.unwrap(kek: cached.kek, header: header) else {
            KernelKeyring.remove(cached.serial)
            throw CredentialStorageError(.locked,
                "the store's unlocked session no longer matches its key (the passphrase or the key changed since it was unlocked); unlock it again")
        }
        return (root, cached.kek)
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
