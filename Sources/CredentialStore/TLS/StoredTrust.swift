public import CredentialStoreCore

/// A server trust as ``TLSKeychain/serverTrusts()`` lists it: the trust and its tier.
public struct StoredTrust: Hashable, Sendable {
    /// The pins and extra anchors.
    public var trust: ServerTrust
    /// The tier it is kept in.
    public var persistence: Persistence

    package init(trust: ServerTrust, persistence: Persistence) {
        self.trust = trust
        self.persistence = persistence
    }
}
