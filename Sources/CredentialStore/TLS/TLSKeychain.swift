public import CredentialStoreCore
import Foundation

/// The TLS half of the keychain, reached as ``CredentialStorage/tls``: client identities and
/// server trust, kept as credentials of their own spaces (``/CredentialStoreCore/TLSEndpoint``),
/// so that they are sealed, proven by the seal tree, tiered and synced exactly as passwords are.
///
/// Each kind has a resolution for a connection (``identity(forHost:port:)``,
/// ``serverTrust(forHost:port:)``: that host and port, else the host on every port, else every
/// host) and an exact read of one endpoint (``identity(for:)``, ``serverTrust(for:)``), which
/// opens that item alone.
public struct TLSKeychain: Sendable {
    /// The store the items are kept in.
    let storage: CredentialStorage

    // MARK: Client identities

    /// Stores `identity` for `endpoint`, in the tier `persistence` names; replaces the identity
    /// stored there before. ``/CredentialStoreCore/Persistence/none`` stores nothing, as it does
    /// for a credential.
    ///
    /// - Parameters:
    ///   - identity: The certificate chain and private key to present.
    ///   - endpoint: The host (or every host) and port (or every port) it is for.
    ///   - persistence: The tier.
    ///   - options: ``RemovalOptions/removeSynchronizable`` to move a synchronizable identity to
    ///     another tier, which removes it on every synced machine.
    /// - Throws: `invalidInput` for an identity without a certificate or a key, or one larger
    ///   than a sync bundle carries; `synchronizableRemovalNeedsOption`, as
    ///   ``CredentialStorage/set(_:for:options:)`` throws it; the store's I/O and integrity errors.
    public func setIdentity(
        _ identity: ClientIdentity, for endpoint: TLSEndpoint, persistence: Persistence, options: RemovalOptions = []
    ) throws {
        try setTLSItem(TLSItemCoding.credential(identity, persistence: persistence), for: endpoint.space(.clientCertificate), options: options)
    }

    /// Stores `identity` for `endpoint` in the tier of the identity it replaces, or
    /// ``/CredentialStoreCore/Persistence/permanent`` for a new one.
    ///
    /// A tier is a separate form, not an optional parameter: with `Persistence?`, Swift reads
    /// `.none` as `nil`, and an identity meant to be kept nowhere would be stored.
    public func setIdentity(_ identity: ClientIdentity, for endpoint: TLSEndpoint, options: RemovalOptions = []) throws {
        try setTLSItem(TLSItemCoding.credential(identity, persistence: nil), for: endpoint.space(.clientCertificate), options: options)
    }

    /// The identity to present to `host` at `port`: the one stored for that host and port, else
    /// for that host on every port, else for every host. An expired identity (its leaf
    /// certificate past `notAfter`) is passed over.
    public func identity(forHost host: String, port: Int) throws -> ClientIdentity? {
        for endpoint in TLSEndpoint.candidates(host: host, port: port) {
            guard let credential = try storage.credentials(for: endpoint.space(.clientCertificate))[TLSItemCoding.identityUser],
                  !credential.isExpired() else { continue }
            return try TLSItemCoding.identity(credential)
        }
        return nil
    }

    /// The identity stored for `endpoint` itself, expired or not.
    public func identity(for endpoint: TLSEndpoint) throws -> ClientIdentity? {
        try storage.credentials(for: endpoint.space(.clientCertificate))[TLSItemCoding.identityUser].map(TLSItemCoding.identity)
    }

    /// Removes the identity stored for `endpoint`; whether there was one.
    ///
    /// - Throws: `synchronizableRemovalNeedsOption` for a synchronizable identity without
    ///   ``RemovalOptions/removeSynchronizable``.
    @discardableResult
    public func removeIdentity(for endpoint: TLSEndpoint, options: RemovalOptions = []) throws -> Bool {
        try storage.remove(user: TLSItemCoding.identityUser, for: endpoint.space(.clientCertificate), options: options)
    }

    /// Every stored identity, by endpoint, with its tier.
    public func identities() throws -> [TLSEndpoint: StoredIdentity] {
        try tlsItems(.clientCertificate, user: TLSItemCoding.identityUser).mapValues {
            StoredIdentity(identity: try TLSItemCoding.identity($0), persistence: $0.persistence)
        }
    }

    /// Writes a TLS item: its details are the item's own (an identity's expiry is its
    /// certificate's), and only a tier left unset is the replaced item's.
    private func setTLSItem(_ credential: Credential, for space: ProtectionSpace, options: RemovalOptions) throws {
        try credential.validate(in: space)
        guard credential.persistence != .none else { return }
        try storage.mutate { try $0.set(credential, in: space, makeDefault: false, fields: .replacingDetails, options: options) }
    }

    // MARK: Server trust

    /// Stores what `endpoint`'s servers must present (pins, extra anchors), in the tier
    /// `persistence` names; replaces what was stored there before.
    /// ``/CredentialStoreCore/Persistence/none`` stores nothing.
    ///
    /// - Parameters:
    ///   - trust: The pins and extra anchors the servers must match.
    ///   - endpoint: The host (or every host) and port (or every port) it is for.
    ///   - persistence: The tier.
    ///   - options: ``RemovalOptions/removeSynchronizable`` to move a synchronizable trust to
    ///     another tier, which removes it on every synced machine.
    public func setServerTrust(
        _ trust: ServerTrust, for endpoint: TLSEndpoint, persistence: Persistence, options: RemovalOptions = []
    ) throws {
        try setTLSItem(TLSItemCoding.credential(trust, persistence: persistence), for: endpoint.space(.serverTrust), options: options)
    }

    /// Stores what `endpoint`'s servers must present in the tier of the trust it replaces, or
    /// ``/CredentialStoreCore/Persistence/permanent`` for a new one (a separate form for the
    /// reason ``setIdentity(_:for:options:)`` gives).
    public func setServerTrust(_ trust: ServerTrust, for endpoint: TLSEndpoint, options: RemovalOptions = []) throws {
        try setTLSItem(TLSItemCoding.credential(trust, persistence: nil), for: endpoint.space(.serverTrust), options: options)
    }

    /// The trust to evaluate `host` at `port` by: the one stored for that host and port, else for
    /// that host on every port, else for every host; nil when none is stored (the system's roots
    /// alone decide).
    public func serverTrust(forHost host: String, port: Int) throws -> ServerTrust? {
        for endpoint in TLSEndpoint.candidates(host: host, port: port) {
            if let trust = try serverTrust(for: endpoint) { return trust }
        }
        return nil
    }

    /// The trust stored for `endpoint` itself.
    public func serverTrust(for endpoint: TLSEndpoint) throws -> ServerTrust? {
        try storage.credentials(for: endpoint.space(.serverTrust))[TLSItemCoding.trustUser].map(TLSItemCoding.trust)
    }

    /// Removes the trust stored for `endpoint`; whether there was one.
    @discardableResult
    public func removeServerTrust(for endpoint: TLSEndpoint, options: RemovalOptions = []) throws -> Bool {
        try storage.remove(user: TLSItemCoding.trustUser, for: endpoint.space(.serverTrust), options: options)
    }

    /// Every stored server trust, by endpoint, with its tier.
    public func serverTrusts() throws -> [TLSEndpoint: StoredTrust] {
        try tlsItems(.serverTrust, user: TLSItemCoding.trustUser).mapValues {
            StoredTrust(trust: try TLSItemCoding.trust($0), persistence: $0.persistence)
        }
    }

    /// The items of `method` by endpoint: found through the listing, which opens no password, and
    /// only their own spaces opened, so that listing identities does not bring every password of
    /// the store into memory.
    private func tlsItems(_ method: AuthenticationMethod, user: String) throws -> [TLSEndpoint: Credential] {
        var items: [TLSEndpoint: Credential] = [:]
        for entry in try storage.allEntries() where entry.space.authenticationMethod == method && entry.user == user {
            guard let endpoint = TLSEndpoint(space: entry.space), let credential = try storage.credentials(for: entry.space)[user] else { continue }
            items[endpoint] = credential
        }
        return items
    }
}
