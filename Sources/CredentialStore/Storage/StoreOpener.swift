package import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import Foundation
import Logging

/// Opens or creates a store: checks its files, unlocks the root key, and only then migrates, so
/// that a wrong key never writes a byte. A missing store is created whole by ``StoreCreation``.
enum StoreOpener {
    struct Opened {
        var repository: SQLiteRepository
        var header: StoreHeader
        var keys: StoreKeyring
        /// The key-encryption key that opened the slot, kept to follow a rekey by another process.
        var kek: SecureBytes
        var protection: StoreProtection
        /// The store's rollback anchor, when one is kept.
        var anchor: AnchorFile?
        /// The seal's generation as the open found it (nil when unchecked), and whether the store
        /// has a seal tree for its lookups to check (a store that a test migrated only part of the
        /// way has none).
        var sealGeneration: Int64?
        var hasSealTree = true
    }

    static func open(
        databaseURL: URL, key: StoreKey, logger: Logger, integrityCheck: CredentialStorage.IntegrityCheck = .onOpen,
        anchor: RollbackAnchor = .none,
        migrateUpTo: String? = nil, clock: any StoreClock = SystemClock()
    ) throws -> Opened {
        let path = databaseURL.path
        try StoreFiles.ensureDirectory(databaseURL.deletingLastPathComponent())
        if try !StoreFiles.checkStoreFiles(database: path) {
            if let created = try StoreCreation.create(
                databaseURL: databaseURL, key: key, logger: logger, anchor: anchor, migrateUpTo: migrateUpTo, clock: clock) {
                return created
            }
            // Another process put its store in place first: it is opened like any other.
            guard try StoreFiles.checkStoreFiles(database: path) else {
                throw CredentialStorageError(.io, "the store \(path) was created by another process and removed again; retry")
            }
        }
        try SQLiteRepository.checkLength(database: path)
        try StoreFiles.refuseEmptyDatabase(path)
        let repository = try SQLiteRepository(path: path)

        let (stored, migrationsPending, schema) = try repository.openingState(upTo: migrateUpTo)
        // A store is only ever put at its path whole, header and all.
        guard var (header, slots) = stored else {
            throw CredentialStorageError(.corrupt, "\(path) is an SQLite database but not a credstore store; choose another path")
        }
        let record = StoreRecord(anchor, databaseURL: databaseURL)
        // Before the key is tried: a store put in the place of this path's own is refused as
        // such, not as a wrong key.
        try record?.check(storeID: header.storeID, protection: slots.contains { $0.kind == .passphrase } ? .passphrase : .keyFile)
        var (root, kek) = try unlock(header: header, slots: slots, key: key)
        var keys = try StoreKeyring(root: root)
        let pending = try migrationsPending.get()
        // Nothing in the schema but what the migrations built: a planted trigger or view
        // would run inside credstore's own statements (before a migration writes, too).
        if let schema { try StoreSchema.check(schema) }
        let anchorFile = AnchorFile(anchor, storeID: header.storeID, databaseURL: databaseURL)
        if pending {
            let pipeline = WritePipeline(keys: keys, storeID: header.storeID, clock: clock)
            // A migration must not make an older copy of the store current.
            pipeline.generationFloor = { anchorFile?.recordedGeneration() }
            try repository.migrate(upTo: migrateUpTo, observer: pipeline) { applied, writer in
                // A store older than the table seal gets one over the rows it has; one older
                // than 0007 gets its sync state folded into its seal.
                try TableSealing.afterMigrating(applied, writer, pipeline: pipeline)
            }
            try StoreSchema.check(repository.schemaState())
        }
        // (Only a test stops the migrations before the seal is a tree.)
        let hasSealTree = try migrateUpTo == nil || repository.hasMigration(TableSealing.treeMigration)
        var sealGeneration: Int64?
        if integrityCheck != .deferredToVerify, hasSealTree {
            // The seal's own MAC and the anchor: O(1), whatever the store's size. Every lookup
            // then checks its rows against the seal's tree, and `verify` checks every row.
            // Another process may rotate the root key in between; then unlock again and check
            // under the new keys.
            for attempt in 1...3 {
                let recorded = anchorFile?.recordedGeneration()
                let outcome = try repository.snapshotRead { [keys] reader throws -> (generation: Int64?, rotated: (StoreHeader, [KeySlot])?) in
                    guard let current = try reader.header(), current.0.keyGeneration == header.keyGeneration else {
                        return (nil, try reader.header())
                    }
                    return (try TableSealing.stored(reader, keys: keys, storeID: header.storeID).generation, nil)
                }
                if let generation = outcome.generation {
                    try anchorFile?.check(storeGeneration: generation, recorded: recorded)
                    anchorFile?.advance(to: generation)
                    sealGeneration = generation
                    break
                }
                guard attempt < 3, let (newHeader, newSlots) = outcome.rotated else {
                    throw CredentialStorageError(.io, "the store's key kept changing while it was opened; retry")
                }
                (header, slots) = (newHeader, newSlots)
                (root, kek) = try unlock(header: header, slots: slots, key: key)
                keys = try StoreKeyring(root: root)
            }
        }
        logger.debug("opened credential store", metadata: ["path": "\(path)"])
        return Opened(repository: repository, header: header, keys: keys, kek: kek, protection: key.protection, anchor: anchorFile,
                      sealGeneration: sealGeneration, hasSealTree: hasSealTree)
    }

    /// The root key, from the slot that `key` opens, and the key-encryption key that opened it.
    static func unlock(header: StoreHeader, slots: [KeySlot], key: StoreKey) throws -> (root: SecureBytes, kek: SecureBytes) {
        guard header.format <= StoreHeader.currentFormat else {
            throw CredentialStorageError(.unsupportedFormatVersion,
                "the store has format \(header.format), newer than this credstore reads (\(StoreHeader.currentFormat)); upgrade credstore")
        }
        // A passphrase store unlocked in this session opens with what the unlock kept when no
        // passphrase is given (`.unlockedSession`, or the key file `CredentialStorage()` names). A given
        // passphrase is always checked: `passwd` and `unlock` must not go ahead on a wrong one.
        if key.protection != .passphrase || key.isUnlockedSession, let passphraseSlot = slots.first(where: { $0.kind == .passphrase }) {
            if let unlocked = try SessionUnlock.unlock(header: header, slot: passphraseSlot) { return unlocked }
            if case .unlockedSession = key {
                throw CredentialStorageError(.locked, "the store is locked: it is not unlocked in this session (or the unlock expired); unlock it with its passphrase")
            }
        } else if case .unlockedSession = key {
            throw CredentialStorageError(.wrongKey, "this store is unlocked by a key file, not a passphrase; give the key file")
        }
        guard let slot = slots.first(where: { $0.kind == key.protection }) else {
            throw CredentialStorageError(.wrongKey, slots.first?.kind == .passphrase
                ? "this store is locked with a passphrase, not a key file; give the passphrase"
                : "this store is unlocked by a key file, not a passphrase; give the key file")
        }
        let kek = try keyEncryptionKey(key, slot: slot)
        return (try slot.unwrap(kek: kek, header: header), kek)
    }

    /// A slot for `root` under `key`, and its key-encryption key; for a key file that does not
    /// exist yet, creates it.
    static func makeSlot(for key: StoreKey, root: SecureBytes, header: StoreHeader, creatingStore: Bool) throws -> (KeySlot, SecureBytes) {
        switch key {
        case .keyFile(let url):
            let kek: SecureBytes
            if creatingStore, try !StoreFiles.checkExisting(url.path), let created = try StoreFiles.createKeyFile(url) {
                kek = created
            } else {
                kek = try StoreFiles.readKeyFile(url)
            }
            return (KeySlot.make(kind: .keyFile, kek: kek, root: root, header: header), kek)
        case .passphrase(let passphrase):
            let (kek, salt, cost) = try passphraseKEK(passphrase)
            return (KeySlot.make(kind: .passphrase, kek: kek, root: root, header: header, salt: salt, cost: cost), kek)
        case .unlockedSession:
            throw CredentialStorageError(.locked, "an unlocked session opens an existing passphrase store only; a new store, or a new key slot, needs a key file or a passphrase")
        }
    }

    /// A new key-encryption key for `passphrase`: fresh salt, Argon2id at MODERATE cost.
    static func passphraseKEK(_ passphrase: String) throws -> (SecureBytes, salt: [UInt8], cost: Sodium.PasswordHashCost) {
        guard !passphrase.isEmpty else {
            throw CredentialStorageError(.wrongKey, "the passphrase is empty; choose a passphrase")
        }
        let salt = Sodium.randomBytes(Sodium.passwordSaltBytes)
        let cost = Sodium.PasswordHashCost.forNewStoreKey
        return (try Sodium.passwordHash(passphrase, salt: salt, cost: cost), salt, cost)
    }

    private static func keyEncryptionKey(_ key: StoreKey, slot: KeySlot) throws -> SecureBytes {
        switch key {
        case .keyFile(let url):
            return try StoreFiles.readKeyFile(url)
        case .passphrase(let passphrase):
            // The cost is read from the file, before anything authenticates it: capped at what
            // credstore writes (MODERATE), so an edited slot cannot make an unlock take 4 GiB and
            // minutes. A lower cost only derives another key, which the commitment refuses.
            let most = Sodium.PasswordHashCost.moderate
            guard let salt = slot.salt, salt.count == Sodium.passwordSaltBytes, let cost = slot.cost,
                  cost.opsLimit >= 1, cost.opsLimit <= most.opsLimit, cost.memLimit >= 8192, cost.memLimit <= most.memLimit
            else {
                throw CredentialStorageError(.corrupt, "the store's passphrase slot is damaged; restore the store from a backup")
            }
            return try Sodium.passwordHash(passphrase, salt: salt, cost: cost)
        case .unlockedSession:
            throw CredentialStorageError(.locked, "the store is locked: it is not unlocked in this session; unlock it with its passphrase")
        }
    }
}

extension StoreKey {
    var isUnlockedSession: Bool {
        if case .unlockedSession = self { true } else { false }
    }

    /// Which kind of key this is: the slot it opens.
    public var protection: StoreProtection {
        switch self {
        case .keyFile: .keyFile
        case .passphrase, .unlockedSession: .passphrase
        }
    }
}
