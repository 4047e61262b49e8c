package import CredentialStoreCore

/// One way to unlock a store: the root key wrapped under a key-encryption key (KEK).
///
/// A store has a key-file slot or a passphrase slot. Changing the passphrase rewraps that slot
/// only; rotating the root key (rekey) rewraps every slot and re-seals every row.
///
/// Each slot carries a key commitment, a keyed hash of its KEK. It tells a wrong key (commitment
/// differs: ``CredentialStorageError/Code/wrongKey``) from a damaged slot (commitment matches but
/// the wrapped key fails authentication: ``CredentialStorageError/Code/corrupt``).
package struct KeySlot: Hashable, Sendable {
    /// What opens this slot: a key file or a passphrase.
    package var kind: StoreProtection
    /// Argon2id salt and cost, for a passphrase slot.
    package var salt: [UInt8]?
    package var cost: Sodium.PasswordHashCost?
    package var commitment: [UInt8]
    package var wrappedRootKey: [UInt8]

    package init(kind: StoreProtection, salt: [UInt8]?, cost: Sodium.PasswordHashCost?, commitment: [UInt8], wrappedRootKey: [UInt8]) {
        self.kind = kind
        self.salt = salt
        self.cost = cost
        self.commitment = commitment
        self.wrappedRootKey = wrappedRootKey
    }

    /// Wraps `root` under `kek`, binding the wrap to this store, this slot kind and this key generation.
    package static func make(
        kind: StoreProtection, kek: SecureBytes, root: SecureBytes, header: StoreHeader,
        salt: [UInt8]? = nil, cost: Sodium.PasswordHashCost? = nil
    ) -> KeySlot {
        let ad = associatedData(kind: kind, header: header)
        let wrapped = root.withUnsafeBytes { Sodium.encrypt($0, key: kek, ad: ad) }
        return KeySlot(
            kind: kind, salt: salt, cost: cost,
            commitment: commitment(kek: kek, kind: kind, header: header), wrappedRootKey: wrapped)
    }

    /// The root key, or `wrongKey` / `corrupt`.
    package func unwrap(kek: SecureBytes, header: StoreHeader) throws -> SecureBytes {
        guard Sodium.constantTimeEquals(Self.commitment(kek: kek, kind: kind, header: header), commitment) else {
            throw CredentialStorageError(.wrongKey, kind == .passphrase
                ? "the passphrase does not unlock this store; check it and try again"
                : "the key file does not unlock this store; pass the key file the store was created with")
        }
        let root = try wrappedRootKey.withUnsafeBytes { raw in
            try Sodium.decrypt(raw, key: kek, ad: Self.associatedData(kind: kind, header: header)) { plain in
                try SecureBytes(copying: plain)
            }
        }
        guard let root, root.count == Sodium.aeadKeyBytes else {
            throw CredentialStorageError(.corrupt, "the store's key slot is damaged; restore the store from a backup")
        }
        return root
    }

    private static func associatedData(kind: StoreProtection, header: StoreHeader) -> [UInt8] {
        var writer = ByteWriter()
        writer.append("credstore key slot v1")
        writer.append(raw: header.storeID)
        writer.append(kind.slotName)
        writer.append(Int64(header.format))
        writer.append(header.keyGeneration)
        return writer.bytes
    }

    /// Commits to the key alone (and the slot kind): a damaged header then fails the unwrap, whose
    /// associated data binds it, and reads as `corrupt`, never as a wrong key.
    private static func commitment(kek: SecureBytes, kind: StoreProtection, header _: StoreHeader) -> [UInt8] {
        var writer = ByteWriter()
        writer.append("credstore key commitment v1")
        writer.append(kind.slotName)
        return writer.bytes.withUnsafeBytes { Sodium.keyedHash($0, key: kek, outputBytes: 32) }
    }
}
