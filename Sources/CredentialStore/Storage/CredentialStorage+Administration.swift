package import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import Foundation
import Logging

extension CredentialStorage {
    /// Every credential of the store and of this instance's session, without passwords, sorted by
    /// host, port, realm and user: ``entries(matching:)`` of the empty query.
    func allEntries() throws -> [CredentialEntry] {
        let stored = try readFollowingRekey({ keys -> [CredentialEntry] in
            let (rows, choices) = try repository.snapshotRead { reader in
                // A listing reads every row: it checks every row against the seal too.
                try checkEveryRow(reader, keys: keys)
                return try (reader.allCredentials(), reader.allDefaultChoices())
            }
            return try entries(rows, choices: Dictionary(choices.map { ($0.spaceIndex, $0) }, uniquingKeysWith: { first, _ in first }), keys: keys)
        }, isMiss: \.isEmpty)
        return try withSessionEntries(stored) { _ in true }
    }

    /// The entries of the scheme, host and port of `space` alone (any realm, any method, no
    /// proxy space of another origin), found through the origin index and checked against the
    /// seal tree as that origin's lookups are: what the git helper and `get --json` ask, without
    /// reading the whole store.
    package func entries(onOriginOf space: ProtectionSpace) throws -> [CredentialEntry] {
        let origin = space.originEncoding
        let stored = try readFollowingRekey({ keys -> [CredentialEntry] in
            let (rows, choices) = try checkedOriginRows(of: space, keys: keys)
            return try entries(rows, choices: choices, keys: keys)
        }, isMiss: \.isEmpty)
        return try withSessionEntries(stored) { $0.originEncoding == origin }
    }

    /// Entries of credential rows, with whether each is its space's default by the store's clock.
    func entries(_ rows: [SealedCredential], choices: [BlindIndex: SealedDefault], keys: StoreKeyring) throws -> [CredentialEntry] {
        let now = clock.now() / 1000
        let rowsPerSpace = Dictionary(grouping: rows, by: \.spaceIndex).mapValues(\.count)
        // One snapshot, so a choice without its row is tampering, not a race with a writer.
        let rowKeys = Set(rows.map { $0.spaceIndex.bytes + $0.userIndex.bytes })
        guard choices.values.allSatisfy({ rowKeys.contains($0.spaceIndex.bytes + $0.userIndex.bytes) }) else { throw Self.danglingDefault }
        return try rows.map { row in
            let space = try keys.decryptSpace(row)
            let credential = try keys.decryptCredential(row)
            let user = credential.user
            guard keys.userIndex(spaceIndex: row.spaceIndex, user: user) == row.userIndex else { throw StoreKeyring.tampered }
            let chosen = choices[row.spaceIndex]?.userIndex
            var entry = CredentialEntry(
                space: space, user: user, persistence: row.persistence, isDefault: false,
                created: Date(timeIntervalSince1970: Double(row.created) / 1000),
                modified: Date(timeIntervalSince1970: Double(row.modified) / 1000), details: credential)
            entry.settleDefault(chosen: chosen.map { $0 == row.userIndex } ?? (rowsPerSpace[row.spaceIndex] == 1), at: now)
            return entry
        }
    }

    /// `stored` with this instance's session credentials of the spaces `included` takes (a
    /// session default overrides what the disk says), sorted by host, port, realm and user.
    func withSessionEntries(_ stored: [CredentialEntry], _ included: (ProtectionSpace) -> Bool) throws -> [CredentialEntry] {
        var entries = stored
        let now = clock.now() / 1000
        for (space, entry) in currentSession().spaces where included(space) {
            for (user, credential) in entry.credentials {
                entries.removeAll { $0.space == space && $0.user == user }
                entries.append(CredentialEntry(
                    space: space, user: user, persistence: credential.persistence, isDefault: false, created: nil, modified: nil, details: credential))
            }
            let defaultUser = try exactDefaultCredential(for: space)?.user
            for index in entries.indices where entries[index].space == space {
                entries[index].settleDefault(chosen: entries[index].user == defaultUser, at: now)
            }
        }
        return entries.sorted {
            ($0.space.host, $0.space.port, $0.space.realm ?? "", $0.user) < ($1.space.host, $1.space.port, $1.space.realm ?? "", $1.user)
        }
    }

    /// What ``StoreMaintenance/verify()`` does.
    func verify() throws -> VerificationReport {
        _ = try followRekey()
        let keys = keys
        var report = VerificationReport(credentialsChecked: 0, defaultsChecked: 0, problems: [], authenticationFailures: 0)
        let (rows, choices, tagRows) = try repository.snapshotRead { reader in
            var tagRows = Set<[UInt8]>()
            try reader.forEachFingerprint(in: [.credentialTags]) { fingerprint, _ in tagRows.insert(fingerprint.key) }
            return (try reader.allCredentials(), try reader.allDefaultChoices(), tagRows)
        }
        // The tag rows each credential's label and attributes call for, as the seal keys them.
        var expectedTags = Set<[UInt8]>()
        var everyRowOpened = true
        for (position, row) in rows.enumerated() {
            do {
                let (_, credential) = try keys.decryptAll(row)
                for tag in keys.tagIndexes(of: credential) { expectedTags.insert(tag.bytes + row.spaceIndex.bytes + row.userIndex.bytes) }
                report.credentialsChecked += 1
            } catch {
                everyRowOpened = false
                report.problems.append("credential row \(position + 1) fails authentication: it was altered, or moved from another row")
                report.authenticationFailures += 1
            }
        }
        // Sealed tag rows that are not the credentials' own: only a writer with the keys makes
        // them (a bug), and a search would miss or wrongly consider a credential.
        if everyRowOpened, tagRows != expectedTags {
            report.problems.append(
                "the search tags differ from the credentials' labels and attributes (\(expectedTags.subtracting(tagRows).count) missing, \(tagRows.subtracting(expectedTags).count) not a credential's)")
            report.authenticationFailures += 1
        }
        let rowKeys = Set(rows.map { $0.spaceIndex.bytes + $0.userIndex.bytes })
        for (position, choice) in choices.enumerated() {
            do {
                _ = try keys.decryptDefault(choice)
                if !rowKeys.contains(choice.spaceIndex.bytes + choice.userIndex.bytes) {
                    report.problems.append("default choice \(position + 1) names a credential that does not exist")
                    report.authenticationFailures += 1
                }
                report.defaultsChecked += 1
            } catch {
                report.problems.append("default choice \(position + 1) fails authentication")
                report.authenticationFailures += 1
            }
        }
        try verifySyncState(keys: keys, into: &report)
        try verifyKeptVersions(keys: keys, credentialKeys: rowKeys, into: &report)
        do {
            let recorded = anchor?.recordedGeneration()
            let seal = try repository.snapshotRead { try TableSealing.check($0, keys: keys, storeID: header.storeID) }
            try anchor?.check(storeGeneration: seal.generation, recorded: recorded)
        } catch let error as CredentialStorageError where error.code == .tamperDetected {
            report.problems.append(error.message)
            report.authenticationFailures += 1
        }
        report.problems += try repository.integrityProblems().map { "SQLite integrity check: \($0)" }
        return report
    }

    /// Opens every sync register, sync default, the device identity and every trusted key, and
    /// checks that synchronizable credentials and live sync registers pair up, key for key.
    private func verifySyncState(keys: StoreKeyring, into report: inout VerificationReport) throws {
        let (items, defaults, device, trusted, unpaired) = try repository.snapshotRead { reader in
            (try reader.allSyncItems(), try reader.allSyncDefaults(), try reader.device(), try reader.allTrustedDevices(),
             try reader.unpairedSyncItems())
        }
        func fail(_ problem: String) {
            report.problems.append(problem)
            report.authenticationFailures += 1
        }
        for (position, item) in items.enumerated() where (try? keys.decrypt(item)) == nil {
            fail("sync register \(position + 1) fails authentication: it was altered, or moved from another row")
        }
        for (position, choice) in defaults.enumerated() where (try? keys.decrypt(choice)) == nil {
            fail("sync default \(position + 1) fails authentication")
        }
        if let device, (try? keys.decryptDeviceSecret(device)) == nil {
            fail("the device identity fails authentication")
        }
        for (position, entry) in trusted.enumerated() {
            guard let record = keys.decryptTrustedDevice(keyIndex: entry.keyIndex, sealed: entry.sealedPublicKey),
                  record.revocation?.verifies ?? true
            else {
                fail("trusted device \(position + 1) fails authentication")
                continue
            }
        }
        if !unpaired.credentials.isEmpty {
            fail("\(unpaired.credentials.count) synchronizable credential(s) without a live sync register: a merge would let any older value win")
        }
        if !unpaired.registers.isEmpty {
            fail("\(unpaired.registers.count) live sync register(s) without their synchronizable credential")
        }
    }

    /// The seal's full check (``TableSealing/check(_:keys:storeID:)``), for a read or write that
    /// reads every row anyway (listing, export, import); nothing for a store without a seal tree.
    func checkEveryRow(_ reader: any CredentialRepositoryReading, keys: StoreKeyring) throws {
        guard let sealChecks else { return }
        let seal = try TableSealing.check(reader, keys: keys, storeID: header.storeID)
        // Not older than a seal this instance saw or wrote (the anchor was checked at open).
        try TableSealing.requireCurrent(seal.generation, floor: sealChecks.highestGeneration)
        sealChecks.advance(to: seal.generation)
    }

    /// What ``StoreMaintenance/isPassphraseProtected`` does.
    var isPassphraseProtected: Bool { keyHolder.protection == .passphrase }

    /// What ``StoreMaintenance/changePassphrase(to:)`` does.
    func changePassphrase(to newPassphrase: String) throws {
        guard isPassphraseProtected else {
            throw CredentialStorageError(.wrongKey, "this store is unlocked by a key file, not a passphrase; there is no passphrase to change")
        }
        // Argon2id takes about a second: derive before taking the write lock.
        let (newKEK, salt, cost) = try StoreOpener.passphraseKEK(newPassphrase)
        let currentKEK = keyHolder.kek
        // No sealed row changes; the pipeline still sees the old slot go (the WAL is emptied of it).
        try repository.write(observer: makePipeline(keys: keys), { transaction in
            guard let (header, slots) = try transaction.header(), let slot = slots.first(where: { $0.kind == .passphrase }) else {
                throw CredentialStorageError(.corrupt, "the store's passphrase slot is missing; restore the store from a backup")
            }
            let root = try slot.unwrap(kek: currentKEK, header: header)
            let newSlot = KeySlot.make(kind: .passphrase, kek: newKEK, root: root, header: header, salt: salt, cost: cost)
            try transaction.replaceSlots(slots.filter { $0.kind != .passphrase } + [newSlot], header: header)
        }, afterCommit: { _ in keyHolder.install(kek: newKEK) })
    }

    /// What ``StoreMaintenance/rekey()`` does.
    func rekey() throws {
        let kek = keyHolder.kek
        let protection = keyHolder.protection
        let newRoot = try SecureBytes.random(count: Sodium.aeadKeyBytes)
        let newKeys = try StoreKeyring(root: newRoot)
        let pipeline = makePipeline(keys: newKeys)
        let (newGeneration, _) = try repository.write(observer: pipeline, { transaction -> (key: Int64, seal: Int64) in
            guard let (header, slots) = try transaction.header(), let slot = slots.first(where: { $0.kind == protection }) else {
                throw CredentialStorageError(.corrupt, "the store's key slot is missing; restore the store from a backup")
            }
            let oldKeys = try StoreKeyring(root: try slot.unwrap(kek: kek, header: header))
            // Checked before anything is re-sealed: re-sealing tampered rows would launder them.
            let seal = try TableSealing.check(transaction, keys: oldKeys, storeID: header.storeID)
            try TableSealing.requireCurrent(seal.generation, floor: pipeline.generationFloor?())
            let rows = try transaction.allCredentials()
            let choices = try transaction.allDefaultChoices()
            var spaces: [BlindIndex: ProtectionSpace] = [:]
            var resealed: [SealedCredential] = []
            for row in rows {
                let (space, credential) = try oldKeys.decryptAll(row)
                spaces[row.spaceIndex] = space
                resealed.append(newKeys.encrypt(credential, in: space, spaceIndex: newKeys.spaceIndex(space), created: row.created, modified: row.modified))
            }
            let resealedChoices = try choices.compactMap { choice -> SealedDefault? in
                let user = try oldKeys.decryptDefault(choice)
                return spaces[choice.spaceIndex].map { newKeys.encryptDefault(user: user, spaceIndex: newKeys.spaceIndex($0)) }
            }
            // The sync tables are sealed under the same subkeys.
            let syncItems = try transaction.allSyncItems().map(oldKeys.decrypt)
            let syncDefaults = try transaction.allSyncDefaults().map(oldKeys.decrypt)
            let device = try transaction.device().map { ($0, try oldKeys.decryptDeviceSecret($0)) }
            let trusted = try transaction.allTrustedDevices().map { entry in
                guard let record = oldKeys.decryptTrustedDevice(keyIndex: entry.keyIndex, sealed: entry.sealedPublicKey) else { throw StoreKeyring.tampered }
                return record
            }
            let keptVersions = try transaction.allKeptVersions().map(oldKeys.decrypt)
            try transaction.deleteAllSyncState()
            try transaction.deleteAllKeptVersions()
            for state in keptVersions {
                let spaceIndex = newKeys.spaceIndex(state.space)
                try transaction.insertKeptVersion(newKeys.encrypt(
                    state, spaceIndex: spaceIndex, userIndex: newKeys.userIndex(spaceIndex: spaceIndex, user: state.credential.user)))
            }
            for state in syncItems { try transaction.upsertSyncItem(newKeys.encrypt(state)) }
            for state in syncDefaults { try transaction.upsertSyncDefault(newKeys.encrypt(state)) }
            if let (sealed, secret) = device {
                try transaction.setDevice(SealedDevice(
                    deviceID: sealed.deviceID, publicKey: sealed.publicKey,
                    sealedSecretKey: newKeys.encryptDeviceSecret(secret, deviceID: sealed.deviceID, publicKey: sealed.publicKey)))
            }
            for record in trusted {
                try transaction.addTrustedDevice(
                    keyIndex: newKeys.trustedKeyIndex(record.publicKey),
                    sealedPublicKey: newKeys.encryptTrustedDevice(record))
            }

            var newHeader = header
            newHeader.keyGeneration += 1
            let newSlot = KeySlot.make(kind: protection, kek: kek, root: newRoot, header: newHeader, salt: slot.salt, cost: slot.cost)
            try transaction.deleteAllCredentials()
            for row in resealed { try transaction.upsert(row) }
            for choice in resealedChoices { try transaction.setDefaultChoice(choice) }
            try transaction.replaceSlots([newSlot], header: newHeader)
            // Every sealed row changed at once: seal them afresh under the new keys.
            try TableSealing.rebuild(transaction, pipeline: pipeline, after: seal.generation)
            return (newHeader.keyGeneration, seal.generation + 1)
        }, afterCommit: { generations in
            keyHolder.install(keys: newKeys, generation: generations.key)
            committed(generation: generations.seal)
        })
        logger.info("rotated the root key", metadata: ["generation": "\(newGeneration)"])
    }
}

extension CredentialStorage {
    /// What ``StoreFile/protection(ofStoreAt:)`` does.
    static func protection(ofStoreAt databaseURL: URL) throws -> StoreProtection? {
        guard try StoreFiles.checkStoreFiles(database: databaseURL.path) else { return nil }
        let repository = try SQLiteRepository(path: databaseURL.path)
        guard let (_, slots) = try repository.read({ try $0.header() }) else { return nil }
        return slots.contains { $0.kind == .passphrase } ? .passphrase : .keyFile
    }
}
