/// The table seal: a keyed MAC over the set of sealed rows, so that what row-level authentication
/// cannot see is detected too: a row deleted, an older copy of a row restored, a row copied in
/// from another store (whose rows, sealed under other keys, also fail on their own).
///
/// The set is summarised as the XOR of a keyed 16-byte hash of each row's fingerprint (its key
/// and the authentication tags of its ciphertexts). XOR makes the summary incremental, so a write
/// costs O(rows it touches): it folds out the hashes of the rows it removes or replaces and folds
/// in those it adds. Because the hashes are keyed, an attacker without the key cannot compute the
/// effect of any row on the summary, so no combination of old, deleted or foreign rows can be
/// made to cancel out (an XOR of *public* values could be solved for with linear algebra). The
/// stored summary, the row count and a generation counter are bound together under a keyed MAC.
///
/// Checking the seal means hashing every row's fingerprint: it runs when a store is opened and in
/// ``CredentialStorage/verify()``, and costs time linear in the number of rows (see
/// docs/reliability.md for the figures).
enum TableSealing {
    /// The migration that adds the seal's table.
    static let migration = "0004_table_seal"
    static let digestBytes = 16

    static func tampered(_ detail: String) -> CredentialStorageError {
        CredentialStorageError(.tamperDetected,
            "the store's rows do not match its seal (\(detail)): a row was deleted, restored from an older copy or copied in from another store; restore the store from a backup")
    }

    /// A new store's seal: no rows, generation 0.
    static func empty(keys: StoreKeys, storeID: [UInt8]) -> TableSeal {
        sealed(generation: 0, rowCount: 0, digest: [UInt8](repeating: 0, count: digestBytes), keys: keys, storeID: storeID)
    }

    /// The seal of the rows as they are now.
    static func compute(_ reader: any CredentialRepositoryReading, keys: StoreKeys, storeID: [UInt8], generation: Int64) throws -> TableSeal {
        var digest = [UInt8](repeating: 0, count: digestBytes)
        var count: Int64 = 0
        try reader.forEachFingerprint { fingerprint in
            xor(&digest, contribution(fingerprint, keys: keys))
            count += 1
        }
        return sealed(generation: generation, rowCount: count, digest: digest, keys: keys, storeID: storeID)
    }

    /// The stored seal, its MAC checked; `tamperDetected` when it is missing or forged.
    static func stored(_ reader: any CredentialRepositoryReading, keys: StoreKeys, storeID: [UInt8]) throws -> TableSeal {
        guard let seal = try reader.tableSeal() else { throw tampered("the seal is missing") }
        let expected = mac(generation: seal.generation, rowCount: seal.rowCount, digest: seal.digest, keys: keys, storeID: storeID)
        guard seal.digest.count == digestBytes, Sodium.constantTimeEquals(seal.mac, expected) else {
            throw tampered("the seal does not authenticate")
        }
        return seal
    }

    /// Checks the stored seal against every row; returns it.
    @discardableResult
    static func check(_ reader: any CredentialRepositoryReading, keys: StoreKeys, storeID: [UInt8]) throws -> TableSeal {
        let seal = try stored(reader, keys: keys, storeID: storeID)
        let actual = try compute(reader, keys: keys, storeID: storeID, generation: seal.generation)
        guard actual.rowCount == seal.rowCount else {
            throw tampered("\(seal.rowCount) rows sealed, \(actual.rowCount) present")
        }
        guard Sodium.constantTimeEquals(actual.digest, seal.digest) else { throw tampered("the rows differ from those sealed") }
        return seal
    }

    /// Folds what the transaction removed and added into the stored seal, one generation on, and
    /// returns the new generation; does nothing (nil) when the transaction touched no sealed row.
    @discardableResult
    static func fold(_ transaction: any CredentialRepositoryWriting, keys: StoreKeys, storeID: [UInt8]) throws -> Int64? {
        let changes = transaction.takeRowChanges()
        guard !changes.removed.isEmpty || !changes.added.isEmpty else { return nil }
        let seal = try stored(transaction, keys: keys, storeID: storeID)
        var digest = seal.digest
        for fingerprint in changes.removed + changes.added {
            xor(&digest, contribution(fingerprint, keys: keys))
        }
        let count = seal.rowCount - Int64(changes.removed.count) + Int64(changes.added.count)
        try transaction.setTableSeal(sealed(generation: seal.generation + 1, rowCount: count, digest: digest, keys: keys, storeID: storeID))
        return seal.generation + 1
    }

    // MARK: Arithmetic

    private static func contribution(_ fingerprint: SealedRowFingerprint, keys: StoreKeys) -> [UInt8] {
        var message = [fingerprint.table.rawValue, UInt8(fingerprint.key.count)]
        message.reserveCapacity(2 + fingerprint.key.count + fingerprint.tags.count)
        message += fingerprint.key
        message += fingerprint.tags
        return keys.tableSealHash(message, outputBytes: digestBytes)
    }

    private static func xor(_ digest: inout [UInt8], _ other: [UInt8]) {
        for index in 0..<digestBytes { digest[index] ^= other[index] }
    }

    private static func sealed(generation: Int64, rowCount: Int64, digest: [UInt8], keys: StoreKeys, storeID: [UInt8]) -> TableSeal {
        TableSeal(generation: generation, rowCount: rowCount, digest: digest,
                  mac: mac(generation: generation, rowCount: rowCount, digest: digest, keys: keys, storeID: storeID))
    }

    private static func mac(generation: Int64, rowCount: Int64, digest: [UInt8], keys: StoreKeys, storeID: [UInt8]) -> [UInt8] {
        var message = ByteWriter(capacity: 96)
        message.append(raw: Array("credstore table seal".utf8))
        message.append(raw: storeID)
        message.append(generation)
        message.append(rowCount)
        message.append(raw: digest)
        return keys.tableSealHash(message.bytes, outputBytes: 32)
    }
}

extension SealedRowFingerprint {
    /// The tag of a sealed field: its last bytes (nonce ‖ ciphertext ‖ tag).
    private static func tag(_ sealed: [UInt8]) -> [UInt8] { Array(sealed.suffix(Sodium.aeadTagBytes)) }

    init(_ row: SealedCredential) {
        self.init(table: .credentials, key: row.spaceIndex + row.userIndex,
                  tags: Self.tag(row.sealedSpace) + Self.tag(row.sealedCredential))
    }

    init(_ choice: SealedDefault) {
        self.init(table: .defaultChoices, key: choice.spaceIndex + choice.userIndex, tags: Self.tag(choice.sealedUser))
    }

    init(trustedKeyIndex: [UInt8], sealedPublicKey: [UInt8]) {
        self.init(table: .trustedDevices, key: trustedKeyIndex, tags: Self.tag(sealedPublicKey))
    }
}
