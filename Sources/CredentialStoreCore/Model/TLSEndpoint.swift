/// Where a TLS client identity or a server trust applies: one host, or every host, and one port,
/// or every port.
///
/// It names a protection space with no protocol (TLS is beneath HTTP, IMAP or git's own), the
/// method ``AuthenticationMethod/clientCertificate`` or ``AuthenticationMethod/serverTrust``, and
/// port 0 for every port, host `*` for every host. No lookup of a password ever reaches such a
/// space: an HTTP space has a protocol.
public struct TLSEndpoint: Hashable, Sendable, CustomStringConvertible {
    /// The host, canonical as a protection space's; nil for every host.
    public let host: String?
    /// The port; nil for every port of ``host``.
    public let port: Int?

    /// An endpoint: `host` (nil for every host) and `port` (nil for every port).
    public init(host: String?, port: Int? = nil) {
        self.host = host.map(ProtectionSpace.canonicalHost)
        self.port = port
    }

    /// Every host, every port: the identity offered when nothing more particular is stored.
    public static let anyHost = TLSEndpoint(host: nil, port: nil)

    /// `host:port`, `host` or `*`.
    public var description: String {
        let name = host.map { $0.contains(":") ? "[\($0)]" : $0 } ?? "*"
        return port.map { "\(name):\($0)" } ?? name
    }

    /// The endpoints a connection to `host` and `port` is answered from, most particular first.
    package static func candidates(host: String, port: Int) -> [TLSEndpoint] {
        [TLSEndpoint(host: host, port: port), TLSEndpoint(host: host, port: nil), .anyHost]
    }

    /// The space this endpoint's item of `method` is kept in.
    package func space(_ method: AuthenticationMethod) -> ProtectionSpace {
        ProtectionSpace(host: host ?? "*", port: port ?? 0, protocol: nil, realm: nil, authenticationMethod: method)
    }

    /// The endpoint a space of a TLS item names; nil for any other space.
    package init?(space: ProtectionSpace) {
        guard space.protocol == nil, space.proxyType == nil, space.realm == nil,
              space.authenticationMethod == .clientCertificate || space.authenticationMethod == .serverTrust else { return nil }
        self.host = space.host == "*" ? nil : space.host
        self.port = space.port == 0 ? nil : space.port
    }
}
