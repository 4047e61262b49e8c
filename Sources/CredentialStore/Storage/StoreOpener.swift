import Foundation
import Logging

/// Opens or creates a store: checks its files, unlocks the root key, and only then migrates, so
/// that a wrong key never writes a byte.
enum StoreOpener {
    struct Opened {
        var repository: SQLiteRepository
        var header: StoreHeader
        var keys: StoreKeys
    }

    static func open(databaseURL: URL, key: StoreKey, logger: Logger, migrateUpTo: String? = nil) throws -> Opened {
        let path = databaseURL.path
        try StoreFiles.ensureDirectory(databaseURL.deletingLastPathComponent())
        if try !StoreFiles.checkStoreFiles(database: path) {
            try StoreFiles.createExclusive(path)
        }
        let repository = try SQLiteRepository(path: path)

        if let (header, slots) = try repository.read({ try $0.header() }) {
            let root = try unlock(header: header, slots: slots, key: key)
            try repository.migrate(upTo: migrateUpTo)
            logger.debug("opened credential store", metadata: ["path": "\(path)"])
            return Opened(repository: repository, header: header, keys: try StoreKeys(root: root))
        }

        guard try repository.isEmpty() else {
            throw CredentialStorageError(.corrupt, "\(path) is an SQLite database but not a credstore store; choose another path")
        }
        let header = StoreHeader(
            format: StoreHeader.currentFormat, storeID: Sodium.randomBytes(16), keyGeneration: 1, created: Mutation.now())
        let root = try SecureBytes.random(count: Sodium.aeadKeyBytes)
        let slot = try makeSlot(for: key, root: root, header: header, creatingStore: true)
        let (storedHeader, storedSlots) = try repository.create(header: header, slots: [slot], upTo: migrateUpTo)
        logger.info("created credential store", metadata: ["path": "\(path)"])
        // Another process may have created the store first; then its root key is the one.
        let finalRoot = storedHeader == header ? root : try unlock(header: storedHeader, slots: storedSlots, key: key)
        return Opened(repository: repository, header: storedHeader, keys: try StoreKeys(root: finalRoot))
    }

    /// The root key, from the slot that `key` opens.
    static func unlock(header: StoreHeader, slots: [KeySlot], key: StoreKey) throws -> SecureBytes {
        guard header.format <= StoreHeader.currentFormat else {
            throw CredentialStorageError(.unsupportedFormatVersion,
                "the store has format \(header.format), newer than this credstore reads (\(StoreHeader.currentFormat)); upgrade credstore")
        }
        guard let slot = slots.first(where: { $0.kind == key.slotKind }) else {
            throw CredentialStorageError(.wrongKey, slots.first?.kind == .passphrase
                ? "this store is locked with a passphrase, not a key file; give the passphrase"
                : "this store is unlocked by a key file, not a passphrase; give the key file")
        }
        return try slot.unwrap(kek: try keyEncryptionKey(key, slot: slot), header: header)
    }

    /// A slot for `root` under `key`; for a key file that does not exist yet, creates it.
    static func makeSlot(for key: StoreKey, root: SecureBytes, header: StoreHeader, creatingStore: Bool) throws -> KeySlot {
        switch key {
        case .keyFile(let url):
            let kek: SecureBytes
            if creatingStore, try !StoreFiles.checkExisting(url.path), let created = try StoreFiles.createKeyFile(url) {
                kek = created
            } else {
                kek = try StoreFiles.readKeyFile(url)
            }
            return KeySlot.make(kind: .keyFile, kek: kek, root: root, header: header)
        case .passphrase(let passphrase):
            try validatePassphrase(passphrase)
            let salt = Sodium.randomBytes(Sodium.passwordSaltBytes)
            let cost = Sodium.PasswordHashCost.moderate
            let kek = try Sodium.passwordHash(passphrase, salt: salt, cost: cost)
            return KeySlot.make(kind: .passphrase, kek: kek, root: root, header: header, salt: salt, cost: cost)
        }
    }

    static func validatePassphrase(_ passphrase: String) throws {
        guard !passphrase.isEmpty else {
            throw CredentialStorageError(.wrongKey, "the passphrase is empty; choose a passphrase")
        }
    }

    private static func keyEncryptionKey(_ key: StoreKey, slot: KeySlot) throws -> SecureBytes {
        switch key {
        case .keyFile(let url):
            return try StoreFiles.readKeyFile(url)
        case .passphrase(let passphrase):
            guard let salt = slot.salt, salt.count == Sodium.passwordSaltBytes, let cost = slot.cost,
                  cost.opsLimit >= 1, cost.opsLimit <= 16, cost.memLimit >= 8192, cost.memLimit <= 4 << 30
            else {
                throw CredentialStorageError(.corrupt, "the store's passphrase slot is damaged; restore the store from a backup")
            }
            return try Sodium.passwordHash(passphrase, salt: salt, cost: cost)
        }
    }
}

extension StoreKey {
    var slotKind: KeySlot.Kind {
        switch self {
        case .keyFile: .keyFile
        case .passphrase: .passphrase
        }
    }
}
