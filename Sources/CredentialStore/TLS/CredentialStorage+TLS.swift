public import CredentialStoreCore
import Foundation

/// The TLS half of the keychain: client identities and server trust, kept as credentials of
/// their own spaces (``/CredentialStoreCore/TLSEndpoint``), so that they are sealed, proven by
/// the seal tree, tiered and synced exactly as passwords are.
extension CredentialStorage {
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
    ///   ``set(_:for:options:)`` throws it; the store's I/O and integrity errors.
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
            guard let credential = try credentials(for: endpoint.space(.clientCertificate))[TLSItemCoding.identityUser],
                  !credential.isExpired() else { continue }
            return try TLSItemCoding.identity(credential)
        }
        return nil
    }

    /// The identity stored for `endpoint` itself, expired or not.
    public func identity(for endpoint: TLSEndpoint) throws -> ClientIdentity? {
        try credentials(for: endpoint.space(.clientCertificate))[TLSItemCoding.identityUser].map(TLSItemCoding.identity)
    }

    /// Removes the identity stored for `endpoint`; whether there was one.
    ///
    /// - Throws: `synchronizableRemovalNeedsOption` for a synchronizable identity without
    ///   ``RemovalOptions/removeSynchronizable``.
    @discardableResult
    public func removeIdentity(for endpoint: TLSEndpoint, options: RemovalOptions = []) throws -> Bool {
        try remove(user: TLSItemCoding.identityUser, for: endpoint.space(.clientCertificate), options: options)
    }

    /// Every stored identity, by endpoint, with its tier.
    public func identities() throws -> [TLSEndpoint: (identity: ClientIdentity, persistence: Persistence)] {
        try tlsItems(.clientCertificate, user: TLSItemCoding.identityUser).mapValues { (try TLSItemCoding.identity($0), $0.persistence) }
    }

    /// Writes a TLS item: its details are the item's own (an identity's expiry is its
    /// certificate's), and only a tier left unset is the replaced item's.
    private func setTLSItem(_ credential: Credential, for space: ProtectionSpace, options: RemovalOptions) throws {
        try credential.validate(in: space)
        guard credential.persistence != .none else { return }
        try mutate { try $0.set(credential, in: space, makeDefault: false, fields: .replacingDetails, options: options) }
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
        try credentials(for: endpoint.space(.serverTrust))[TLSItemCoding.trustUser].map(TLSItemCoding.trust)
    }

    /// Removes the trust stored for `endpoint`; whether there was one.
    @discardableResult
    public func removeServerTrust(for endpoint: TLSEndpoint, options: RemovalOptions = []) throws -> Bool {
        try remove(user: TLSItemCoding.trustUser, for: endpoint.space(.serverTrust), options: options)
    }

    /// Every stored server trust, by endpoint, with its tier.
    public func serverTrusts() throws -> [TLSEndpoint: (trust: ServerTrust, persistence: Persistence)] {
        try tlsItems(.serverTrust, user: TLSItemCoding.trustUser).mapValues { (try TLSItemCoding.trust($0), $0.persistence) }
    }

    /// The items of `method` by endpoint: found through the listing, which opens no password, and
    /// only their own spaces opened, so that listing identities does not bring every password of
    /// the store into memory.
    private func tlsItems(_ method: AuthenticationMethod, user: String) throws -> [TLSEndpoint: Credential] {
        var items: [TLSEndpoint: Credential] = [:]
        for entry in try entries() where entry.space.authenticationMethod == method && entry.user == user {
            guard let endpoint = TLSEndpoint(space: entry.space), let credential = try credentials(for: entry.space)[user] else { continue }
            items[endpoint] = credential
        }
        return items
    }
}

/// How an identity or a trust is written into a credential: one line of text in the password,
/// which is sealed with the rest, so no key byte, certificate subject or pin is ever in the clear.
///
/// `identity/1 key=BASE64 chain=BASE64,BASE64…` and `trust/1 pins=BASE64,… anchors=BASE64,…`:
/// versioned, so that a later form can be read beside this one.
enum TLSItemCoding {
    static let identityUser = "identity"
    static let trustUser = "trust"

    static func credential(_ identity: ClientIdentity, persistence: Persistence?) throws -> Credential {
        guard !identity.certificateChain.isEmpty, !identity.certificateChain.contains(where: \.isEmpty), !identity.privateKey.isEmpty else {
            throw CredentialStorageError(.invalidInput, "a client identity needs its certificate and its private key")
        }
        let text = "identity/1 key=\(base64(identity.privateKey)) chain=\(identity.certificateChain.map(base64).joined(separator: ","))"
        var credential = Credential(user: identityUser, password: text, expires: identity.expires)
        if let persistence { credential.persistence = persistence }
        return credential
    }

    static func credential(_ trust: ServerTrust, persistence: Persistence?) throws -> Credential {
        guard !trust.pins.isEmpty || !trust.anchors.isEmpty, !trust.anchors.contains(where: \.isEmpty) else {
            throw CredentialStorageError(.invalidInput, "a server trust needs a pin or an anchor certificate")
        }
        let pins = trust.pins.sorted().map { base64($0.digest) }.joined(separator: ",")
        let text = "trust/1 pins=\(pins) anchors=\(trust.anchors.map(base64).joined(separator: ","))"
        var credential = Credential(user: trustUser, password: text)
        if let persistence { credential.persistence = persistence }
        return credential
    }

    static func identity(_ credential: Credential) throws -> ClientIdentity {
        let fields = try parse(credential.password, kind: "identity/1", names: ["key", "chain"])
        guard let key = fields["key"]?.first, let chain = fields["chain"], !chain.isEmpty else { throw damaged }
        return ClientIdentity(certificateChain: chain, privateKey: key, expires: credential.expires)
    }

    static func trust(_ credential: Credential) throws -> ServerTrust {
        let fields = try parse(credential.password, kind: "trust/1", names: ["pins", "anchors"])
        var pins: Set<PublicKeyPin> = []
        for digest in fields["pins"] ?? [] {
            guard let pin = PublicKeyPin(digest: digest) else { throw damaged }
            pins.insert(pin)
        }
        return ServerTrust(pins: pins, anchors: fields["anchors"] ?? [])
    }

    /// The words of `text` after `kind`, each `name=` a comma-separated list of base64 values.
    private static func parse(_ text: String, kind: String, names: Set<String>) throws -> [String: [[UInt8]]] {
        let words = text.split(separator: " ", omittingEmptySubsequences: false)
        guard words.first.map(String.init) == kind else { throw damaged }
        var fields: [String: [[UInt8]]] = [:]
        for word in words.dropFirst() {
            guard let equals = word.firstIndex(of: "=") else { throw damaged }
            let name = String(word[..<equals])
            guard names.contains(name), fields[name] == nil else { throw damaged }
            let list = word[word.index(after: equals)...]
            fields[name] = try list.isEmpty ? [] : list.split(separator: ",", omittingEmptySubsequences: false).map {
                guard let data = Data(base64Encoded: String($0)), !data.isEmpty else { throw damaged }
                return Array(data)
            }
        }
        return fields
    }

    private static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    /// A TLS space whose credential is not one this store writes: only an edit of the store, or a
    /// credential set in a TLS space by hand, makes one.
    private static var damaged: CredentialStorageError {
        CredentialStorageError(.corrupt, "a stored TLS identity or server trust cannot be read; store it again")
    }
}
