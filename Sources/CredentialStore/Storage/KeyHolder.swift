import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import Synchronization

/// The working keys of an open store, and what it takes to follow a rotation.
///
/// `rekey` in another process replaces the root key (and so every subkey) in one transaction and
/// bumps the header's key generation. This instance keeps its key-encryption key, so when it
/// notices a newer generation it unwraps the new root from the slot instead of failing.
final class KeyHolder: Sendable {
    private struct State {
        var generation: Int64
        var keys: StoreKeyring
        var kek: SecureBytes
    }

    let protection: StoreProtection
    private let state: Mutex<State>

    init(keys: StoreKeyring, generation: Int64, kek: SecureBytes, protection: StoreProtection) {
        self.protection = protection
        state = Mutex(State(generation: generation, keys: keys, kek: kek))
    }

    var keys: StoreKeyring { state.withLock { $0.keys } }
    var generation: Int64 { state.withLock { $0.generation } }
    var kek: SecureBytes { state.withLock { $0.kek } }

    /// Follows the header: if its generation differs from ours, unwraps the new root key.
    /// Returns whether the keys changed.
    @discardableResult
    func follow(header: StoreHeader, slots: [KeySlot]) throws -> Bool {
        let (generation, kek) = state.withLock { ($0.generation, $0.kek) }
        guard header.keyGeneration != generation else { return false }
        guard let slot = slots.first(where: { $0.kind == protection }) else {
            throw CredentialStorageError(.wrongKey, "the store's key slots changed in another process; open the store again with its new key")
        }
        let keys = try StoreKeyring(root: try slot.unwrap(kek: kek, header: header))
        state.withLock { $0 = State(generation: header.keyGeneration, keys: keys, kek: kek) }
        return true
    }

    /// Installs keys this instance made itself (after its own rekey or passphrase change).
    func install(keys: StoreKeyring? = nil, generation: Int64? = nil, kek: SecureBytes? = nil) {
        state.withLock { state in
            if let keys { state.keys = keys }
            if let generation { state.generation = generation }
            if let kek { state.kek = kek }
        }
    }
}
