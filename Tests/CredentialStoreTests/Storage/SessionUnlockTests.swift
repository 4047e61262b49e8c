import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreTestSupport

/// The library's side of an unlocked session: `.unlockedSession` opens only from the kernel
/// keyring, only the store the key was kept for, and only while it matches the store's key.
@Suite(.serialized, .cheapKeyDerivation) struct SessionUnlockTests {
    static let passphrase = "correct horse battery"

    private func passphraseStore(_ store: TemporaryStore, _ passphrase: String = passphrase) throws -> CredentialStorage {
        try CredentialStorage(at: store.databaseURL, key: .passphrase(passphrase), rollbackAnchor: .directory(store.anchorDirectory))
    }

    private func openUnlocked(_ store: TemporaryStore) throws -> CredentialStorage {
        try CredentialStorage(at: store.databaseURL, key: .unlockedSession, rollbackAnchor: .directory(store.anchorDirectory))
    }

    private static let space = ProtectionSpace(host: "a.example.com", port: 443, protocol: "https", realm: nil)

    @Test func unlockedSessionOpensOnlyWhileUnlocked() throws {
        let store = try TemporaryStore()
        let storage = try passphraseStore(store)
        try storage.set(Credential(user: "u", password: "p"), for: Self.space)
        let locked = #expect(throws: CredentialStorageError.self) { try openUnlocked(store) }
        #expect(locked?.code == .locked)
        _ = try storage.keepUnlocked(forSeconds: 60, in: .session)
        #expect(try openUnlocked(store).credentials(for: Self.space)["u"]?.password == "p")
        #expect(try CredentialStorage.unlockedUntil(storeAt: store.databaseURL) != nil)
        #expect(try CredentialStorage.lock(storeAt: store.databaseURL))
        #expect(throws: CredentialStorageError.self) { try openUnlocked(store) }
    }

    @Test func anotherStoreRefusesTheKeptKey() throws {
        let (first, second) = (try TemporaryStore(), try TemporaryStore())
        let a = try passphraseStore(first)
        _ = try passphraseStore(second)  // the same passphrase, another store id
        _ = try a.keepUnlocked(forSeconds: 60, in: .session)
        let other = #expect(throws: CredentialStorageError.self) { try openUnlocked(second) }
        #expect(other?.code == .locked)
        // Even A's key planted under B's name does not open B: it does not unlock B's slot, and is dropped.
        let secondID = try #require(try SQLiteRepositoryProbe.storeID(second.databaseURL))
        let cached = try #require(SessionUnlock.load(storeID: a.header.storeID))
        try SessionUnlock.save(kek: cached.kek, storeID: secondID, keyGeneration: 1, in: .session, timeoutSeconds: 60, now: SystemClock().now())
        let planted = #expect(throws: CredentialStorageError.self) { try openUnlocked(second) }
        #expect(planted?.code == .locked)
        #expect(SessionUnlock.load(storeID: secondID) == nil, "the stale key is forgotten")
        _ = try CredentialStorage.lock(storeAt: first.databaseURL)
    }

    /// Keys under the store's name that `unlock` did not write: read as locked and dropped, never
    /// a crash (a payload longer than expected was a double free in `SecureBytes`) and never a
    /// status of "unlocked" (found by an outsider's attack).
    static let plantedPayloads: [(String, [UInt8])] = {
        let magic = [UInt8]("CSU1".utf8)
        let generation: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 1]
        let farFuture: [UInt8] = [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        return [
            ("longer than a kept key", [UInt8](repeating: 0x41, count: 300)),
            ("shorter", magic),
            ("the right shape, a zero key", magic + generation + farFuture + [UInt8](repeating: 0, count: 32)),
        ]
    }()

    @Test(arguments: plantedPayloads)
    func aPlantedKeyReadsAsLockedAndIsDropped(_ kind: String, _ payload: [UInt8]) throws {
        let store = try TemporaryStore()
        let storage = try passphraseStore(store)
        try KernelKeyring.store(payload, description: SessionUnlock.description(storeID: storage.header.storeID), in: .session, timeout: 60)
        #expect(try CredentialStorage.unlockedUntil(storeAt: store.databaseURL) == nil, "\(kind)")
        try KernelKeyring.store(payload, description: SessionUnlock.description(storeID: storage.header.storeID), in: .session, timeout: 60)
        let locked = #expect(throws: CredentialStorageError.self) { try openUnlocked(store) }
        #expect(locked?.code == .locked, "\(kind)")
        #expect(KernelKeyring.find(SessionUnlock.description(storeID: storage.header.storeID)) == nil, "\(kind): the planted key is dropped")
    }

    @Test func aKeptKeyPastItsOwnExpiryIsNotUsed() throws {
        let store = try TemporaryStore()
        let storage = try passphraseStore(store)
        try storage.set(Credential(user: "u", password: "p"), for: Self.space)
        // The kernel would keep it a minute more; the expiry written in it has passed.
        try SessionUnlock.save(kek: storage.keyHolder.kek, storeID: storage.header.storeID, keyGeneration: storage.keyHolder.generation,
                               in: .session, timeoutSeconds: 60, now: SystemClock().now() - 120_000)
        #expect(try CredentialStorage.unlockedUntil(storeAt: store.databaseURL) == nil)
        let locked = #expect(throws: CredentialStorageError.self) { try openUnlocked(store) }
        #expect(locked?.code == .locked)
        // The same key within its time opens the store: the test above is about the time alone.
        try SessionUnlock.save(kek: storage.keyHolder.kek, storeID: storage.header.storeID, keyGeneration: storage.keyHolder.generation,
                               in: .session, timeoutSeconds: 60, now: SystemClock().now())
        #expect(try openUnlocked(store).credentials(for: Self.space)["u"]?.password == "p")
        #expect(try CredentialStorage.unlockedUntil(storeAt: store.databaseURL) != nil)
        _ = try CredentialStorage.lock(storeAt: store.databaseURL)
    }

    @Test func aPassphraseChangeOrARekeyMakesTheKeptKeyStale() throws {
        let store = try TemporaryStore()
        let storage = try passphraseStore(store)
        _ = try storage.keepUnlocked(forSeconds: 60, in: .session)
        try storage.maintenance.changePassphrase(to: "a new passphrase")
        #expect(throws: CredentialStorageError.self) { try openUnlocked(store) }
        #expect(try CredentialStorage.unlockedUntil(storeAt: store.databaseURL) == nil)

        _ = try storage.keepUnlocked(forSeconds: 60, in: .user)
        #expect(try openUnlocked(store).credentials(for: Self.space).isEmpty)
        try storage.maintenance.rekey()
        let stale = #expect(throws: CredentialStorageError.self) { try openUnlocked(store) }
        #expect(stale?.code == .locked)
        // A given passphrase is always checked, unlocked or not.
        _ = try storage.keepUnlocked(forSeconds: 60, in: .session)
        let wrong = #expect(throws: CredentialStorageError.self) { try passphraseStore(store, "not it") }
        #expect(wrong?.code == .wrongKey)
        _ = try CredentialStorage.lock(storeAt: store.databaseURL)
    }
}

/// The store id of a store file, read from its header.
enum SQLiteRepositoryProbe {
    static func storeID(_ url: URL) throws -> [UInt8]? {
        try SQLiteRepository(path: url.path).openingState().header?.0.storeID
    }
}
