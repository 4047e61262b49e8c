public import CredentialStoreCore

/// A client identity as ``TLSKeychain/identities()`` lists it: the identity and its tier.
public struct StoredIdentity: Hashable, Sendable {
    /// The certificate chain and private key.
    public var identity: ClientIdentity
    /// The tier it is kept in.
    public var persistence: Persistence

    package init(identity: ClientIdentity, persistence: Persistence) {
        self.identity = identity
        self.persistence = persistence
    }
}
