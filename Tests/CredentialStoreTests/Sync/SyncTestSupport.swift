import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// One store of a sync test: its temporary folder and one open instance (whose session tier lives
/// as long as the peer).
final class SyncPeer {
    let folder: TemporaryStore
    let storage: CredentialStorage

    init(clock: any StoreClock = SystemClock()) throws {
        folder = try TemporaryStore()
        storage = try folder.open(clock: clock)
    }

    /// This store's device key, as other stores trust it and export to it.
    var publicKey: DeviceKey {
        get throws { try storage.sync.deviceKey }
    }

    /// A file beside the store (in the folder removed with the peer).
    func file(_ name: String) -> URL {
        folder.file(name)
    }

    /// Exports this store's synchronizable state to `recipients`, in a new file; returns its URL.
    func export(to recipients: [SyncPeer], name: String = "bundle-\(UUID().uuidString).csbundle") throws -> URL {
        let url = file(name)
        try storage.sync.export(to: url, protection: .recipients(try recipients.map { try $0.publicKey }))
        return url
    }

    /// Opens a bundle made for this store with the library's reader (no import).
    func decode(_ url: URL) throws -> BundleContents {
        try BundleFormat.read([UInt8](try Data(contentsOf: url)), passphrase: nil, device: try storage.deviceIdentity())
    }
}

/// Makes every peer in `trusting` trust every peer in `signers` (itself excepted).
func trust(_ trusting: [SyncPeer], _ signers: [SyncPeer]) throws {
    for peer in trusting {
        for signer in signers where signer !== peer {
            try peer.storage.sync.trust(try signer.publicKey)
        }
    }
}

/// Everything a store holds, to prove that a refused import changed nothing: the public listings,
/// and the sync bookkeeping (registers, clock, trusted devices) as the sealed bytes on disk.
struct StoreSnapshot: Equatable {
    var entries: [CredentialEntry]
    var credentials: [ProtectionSpace: [String: Credential]]
    var syncItems: [[UInt8]]
    var syncDefaults: [[UInt8]]
    var clock: [Int64]
    var trusted: [DeviceKey]

    init(_ storage: CredentialStorage) throws {
        entries = try storage.entries()
        credentials = try storage.allCredentials()
        let (items, defaults, clock) = try storage.repository.read { reader in
            (try reader.allSyncItems(), try reader.allSyncDefaults(), try reader.syncClock())
        }
        syncItems = items.map { $0.spaceIndex.bytes + $0.userIndex.bytes + [$0.deleted ? 1 : 0] + withUnsafeBytes(of: $0.wall) { Array($0) } + $0.sealedState }
            .sorted { $0.lexicographicallyPrecedes($1) }
        syncDefaults = defaults.map { $0.spaceIndex.bytes + $0.sealedState }.sorted { $0.lexicographicallyPrecedes($1) }
        self.clock = clock.map { [$0.wall, $0.counter] } ?? []
        trusted = try storage.sync.trustedDevices().map(\.key)
    }

    /// The snapshot without the hybrid logical clock, which an import may tick even when it
    /// changes nothing else (receiving is an event of the clock).
    var ignoringClock: StoreSnapshot {
        var copy = self
        copy.clock = []
        return copy
    }
}

/// The synchronizable state of a store as every machine must agree on it: per space, the
/// synchronizable credentials (user → password) and the explicit default, kept only when it names
/// a synchronizable credential.
struct SyncView: Equatable, CustomStringConvertible {
    struct Space: Equatable {
        var credentials: [String: String]
        var defaultUser: String?
    }

    var spaces: [String: Space]

    init(_ storage: CredentialStorage, spaces: [ProtectionSpace]) throws {
        var result: [String: Space] = [:]
        for space in spaces {
            let synchronizable = try storage.credentials(for: space).filter { $0.value.persistence == .synchronizable }
            var defaultUser: String?
            // The disk pointer (a session default, of this instance only, is not synchronizable).
            let keys = storage.keys
            if let choice = try storage.repository.read({ try $0.defaultChoice(space: keys.spaceIndex(space)) }) {
                let user = try keys.decryptDefault(choice)
                defaultUser = synchronizable[user] == nil ? nil : user
            }
            let entry = Space(credentials: synchronizable.mapValues(\.password), defaultUser: defaultUser)
            if !entry.credentials.isEmpty || entry.defaultUser != nil {
                result[space.host + "/" + (space.realm ?? "")] = entry
            }
        }
        self.spaces = result
    }

    var description: String {
        spaces.keys.sorted().map { key in
            let space = spaces[key]!
            let users = space.credentials.keys.sorted().map { "\($0)=\(space.credentials[$0]!)" }.joined(separator: ",")
            return "\(key){\(users) default=\(space.defaultUser ?? "-")}"
        }.joined(separator: " ")
    }
}

/// The sync register of (space, user) in `storage`, opened.
func syncRegister(_ storage: CredentialStorage, _ space: ProtectionSpace, _ user: String) throws -> SyncItemState? {
    let keys = storage.keys
    let spaceIndex = keys.spaceIndex(space)
    return try storage.repository.read { try $0.syncItem(space: spaceIndex, user: keys.userIndex(spaceIndex: spaceIndex, user: user)) }
        .map(keys.decrypt)
}

/// A synchronizable credential: what most sync tests store.
func sync(_ user: String, _ password: String) -> Credential {
    Credential(user: user, password: password, persistence: .synchronizable)
}
