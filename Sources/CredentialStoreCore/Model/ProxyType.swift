/// The kind of proxy a proxy protection space belongs to.
///
/// Proxy spaces answer 407 challenges and are never equal to server spaces, which answer 401s.
public enum ProxyType: String, Hashable, Sendable, Codable, CaseIterable {
    /// An HTTP proxy.
    case http
    /// An HTTPS proxy (the connection to the proxy itself is TLS).
    case https
    /// An FTP proxy.
    case ftp
    /// A SOCKS proxy.
    case socks

    /// Reads a proxy type from any of the spellings in use.
    ///
    /// Accepts, case-insensitively, the plain names (`"https"`, `"SOCKS"`), Apple's
    /// `NSURLProtectionSpace…Proxy` values, and swift-corelibs-foundation's constant names
    /// (`"NSURLProtectionSpaceHTTPSProxy"`), which corelibs uses as the values themselves.
    public init?(name: String) {
        var token = ProtocolToken.asciiLowercased(name)
        if token.hasPrefix(ProtocolToken.foundationPrefix) {
            token.removeFirst(ProtocolToken.foundationPrefix.count)
            guard token.hasSuffix("proxy") else { return nil }
            token.removeLast("proxy".count)
        }
        self.init(rawValue: token)
    }

    /// The port a proxy of this type listens on when a space gives port 0.
    package var defaultPort: Int {
        switch self {
        case .http: 80
        case .https: 443
        case .ftp: 21
        case .socks: 1080
        }
    }
}
