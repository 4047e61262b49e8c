import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

/// The `.forSession` tier: credentials held in the memory of one ``CredentialStorage``, never
/// written anywhere, gone when it is.
///
/// A space's default pointer lives in the tier of the credential it names: here when that
/// credential is a session one, in the store otherwise. At most one of the two exists per space.
struct SessionTier: Sendable {
    struct Space: Sendable {
        var credentials: [String: Credential] = [:]
        var defaultUser: String?
    }

    private(set) var spaces: [ProtectionSpace: Space] = [:]

    subscript(space: ProtectionSpace) -> Space {
        spaces[space] ?? Space()
    }

    mutating func set(_ credential: Credential, in space: ProtectionSpace) {
        spaces[space, default: Space()].credentials[credential.user] = credential
    }

    /// Removes a user's credential; the default pointer is the caller's to settle.
    mutating func remove(user: String, in space: ProtectionSpace) {
        spaces[space]?.credentials[user] = nil
        dropIfEmpty(space)
    }

    mutating func setDefault(_ user: String?, in space: ProtectionSpace) {
        spaces[space, default: Space()].defaultUser = user
        dropIfEmpty(space)
    }

    private mutating func dropIfEmpty(_ space: ProtectionSpace) {
        if let entry = spaces[space], entry.credentials.isEmpty, entry.defaultUser == nil {
            spaces[space] = nil
        }
    }
}
