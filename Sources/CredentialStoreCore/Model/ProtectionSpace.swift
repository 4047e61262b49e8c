public import Foundation

/// A server or proxy that asks for credentials: host, port, protocol, realm and method.
///
/// Unlike Foundation's `URLProtectionSpace` on Linux, which compares by object identity, a
/// `ProtectionSpace` is a value and compares by canonical identity:
///
/// | field | rule |
/// |---|---|
/// | host | ASCII lowercased, one trailing dot dropped, IPv6 brackets and spelling normalised |
/// | port | exact; 0 means the protocol's default (http 80, https 443, ftp 21, ftps 990, socks 1080) |
/// | protocol / proxy type | case-insensitive; Apple's values and corelibs' constant names map to one token |
/// | realm | exact and case-sensitive (RFC 7235); `nil` and `""` are distinct; Unicode compared in NFC |
/// | authenticationMethod | `nil` means ``AuthenticationMethod/default`` |
/// | proxy | a proxy space never equals a server space |
///
/// The properties return the canonical values, so two equal spaces also read the same.
///
/// ## Topics
/// ### Creating a space
/// - ``init(host:port:protocol:realm:authenticationMethod:)``
/// - ``init(proxy:realm:authenticationMethod:)``
/// - ``init(url:realm:authenticationMethod:)``
public struct ProtectionSpace: Hashable, Sendable {
    /// The host, in canonical form (lowercased ASCII, no trailing dot, IPv6 without brackets).
    public let host: String
    /// The port; a port of 0 given for a known protocol reads as that protocol's default.
    public let port: Int
    /// The protocol token (`"https"`, `"http"`, `"ftp"` …) of a server space; `nil` for proxies.
    public let `protocol`: String?
    /// The realm; compared exactly.
    public let realm: String?
    /// The authentication method; ``AuthenticationMethod/default`` when none was given.
    public let authenticationMethod: AuthenticationMethod
    /// The proxy type of a proxy space; `nil` for a server space.
    public let proxyType: ProxyType?
    /// The canonical identity as bytes, made once: equality, hashing and the store's blind
    /// indexes all use it, so they cannot disagree.
    package let canonicalEncoding: [UInt8]

    /// Creates a server space, the kind that answers HTTP 401.
    public init(
        host: String,
        port: Int,
        protocol: String?,
        realm: String?,
        authenticationMethod: AuthenticationMethod? = nil
    ) {
        let token = `protocol`.map(ProtocolToken.canonical)
        self.host = ProtectionSpace.canonicalHost(host)
        self.port = port == 0 ? (token.flatMap(ProtocolToken.defaultPort) ?? 0) : port
        self.protocol = token
        self.realm = realm.map(Unicode.nfc)
        self.authenticationMethod = AuthenticationMethod(rawValue: Unicode.nfc((authenticationMethod ?? .default).rawValue))
        self.proxyType = nil
        canonicalEncoding = Self.encode(
            proxyType: nil, protocol: self.protocol, host: self.host, port: self.port,
            realm: self.realm, method: self.authenticationMethod)
    }

    /// Creates a proxy space, the kind that answers HTTP 407: `proxy`'s host, port and type.
    public init(
        proxy: ProxyEndpoint,
        realm: String?,
        authenticationMethod: AuthenticationMethod? = nil
    ) {
        self.host = ProtectionSpace.canonicalHost(proxy.host)
        self.port = proxy.port == 0 ? proxy.type.defaultPort : proxy.port
        self.protocol = nil
        self.realm = realm.map(Unicode.nfc)
        self.authenticationMethod = AuthenticationMethod(rawValue: Unicode.nfc((authenticationMethod ?? .default).rawValue))
        self.proxyType = proxy.type
        canonicalEncoding = Self.encode(
            proxyType: proxy.type, protocol: nil, host: self.host, port: self.port,
            realm: self.realm, method: self.authenticationMethod)
    }

    /// Creates the server space of a URL: its scheme, host and port.
    ///
    /// A URL without a port means its scheme's registered port: `postgres://db` is the space of
    /// `postgres://db:5432` (likewise mysql, redis, amqp(s), ldap(s), imap(s), pop3(s), smtp(s),
    /// ssh and sftp, mongodb, and the web's http, https, ftp and ftps).
    ///
    /// The URL is read as browsers and the WHATWG URL standard read it, or refused: a URL whose
    /// text Foundation and a browser would take to different hosts (a backslash, a
    /// percent-encoded host, a user name or password before `@`, white space, a host in an old
    /// IPv4 spelling such as `0x7f.1`) names no space.
    ///
    /// - Throws: ``CredentialStorageError/Code/invalidProtectionSpace`` when the URL has no host or
    ///   names a space no store may hold (see `validate()`), ``CredentialStorageError/Code/invalidInput``
    ///   when its text is one of those above, or the realm or method holds a line break or NUL.
    ///   No message repeats the URL.
    public init(url: URL, realm: String? = nil, authenticationMethod: AuthenticationMethod? = nil) throws {
        let reading: URLReading
        do {
            reading = try URLReading(url.absoluteString)
        } catch let error as CredentialStorageError where error.message == URLReading.notAURL {
            throw CredentialStorageError(.invalidProtectionSpace, "the URL has no host; give a URL such as https://example.com")
        }
        self.init(host: reading.host, port: reading.spacePort, protocol: reading.scheme, realm: realm, authenticationMethod: authenticationMethod)
        try validate()
    }

    /// Whether this is a proxy space (HTTP 407) rather than a server space (HTTP 401).
    public var isProxy: Bool { proxyType != nil }

    /// Whether the credential travels protected: over https/ftps, to an HTTPS proxy, or through a
    /// method that never sends the password itself (Digest, NTLM, Negotiate).
    public var receivesCredentialSecurely: Bool {
        if let proxyType { return proxyType == .https || Self.methodProtectsPassword(authenticationMethod) }
        return `protocol` == "https" || `protocol` == "ftps" || Self.methodProtectsPassword(authenticationMethod)
    }

    private static func methodProtectsPassword(_ method: AuthenticationMethod) -> Bool {
        method == .httpDigest || method == .ntlm || method == .negotiate
    }
}

extension ProtectionSpace {
    /// Equal when the canonical identities are: host case, a trailing dot or an explicit default
    /// port do not tell two spaces apart.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.canonicalEncoding == rhs.canonicalEncoding
    }

    /// Hashes the canonical identity, so that spaces equal under ``==(_:_:)`` hash alike.
    public func hash(into hasher: inout Hasher) {
        canonicalEncoding.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

extension ProtectionSpace: CustomStringConvertible {
    /// A readable form such as `https://example.com:443 realm "api" (NSURLAuthenticationMethodHTTPBasic)`.
    public var description: String {
        var text = proxyType.map { "proxy \($0.rawValue)://" } ?? "\(`protocol` ?? "unknown")://"
        text += host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        text += ":\(port)"
        if let realm { text += " realm \(String(reflecting: realm))" }
        if authenticationMethod != .default { text += " (\(authenticationMethod.rawValue))" }
        // Descriptions end up in logs and on terminals: no field may drive the terminal.
        return FieldRules.displayEscaped(text)
    }
}

extension ProtectionSpace: Codable {
    private enum CodingKeys: String, CodingKey {
        case host, port, `protocol`, realm, authenticationMethod, proxyType
    }

    /// Decodes the keyed form ``encode(to:)`` writes and canonicalizes it as the initializers do;
    /// a `proxyType` key makes a proxy space.
    ///
    /// - Throws: the decoder's errors, and ``CredentialStorageError`` (`invalidInput` or
    ///   `invalidProtectionSpace`) for a space no store may hold, as ``init(url:realm:authenticationMethod:)`` does.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let host = try container.decode(String.self, forKey: .host)
        let port = try container.decode(Int.self, forKey: .port)
        let realm = try container.decodeIfPresent(String.self, forKey: .realm)
        let method = try container.decodeIfPresent(AuthenticationMethod.self, forKey: .authenticationMethod)
        if let proxyType = try container.decodeIfPresent(ProxyType.self, forKey: .proxyType) {
            self.init(proxy: ProxyEndpoint(host: host, port: port, type: proxyType), realm: realm, authenticationMethod: method)
        } else {
            let proto = try container.decodeIfPresent(String.self, forKey: .protocol)
            self.init(host: host, port: port, protocol: proto, realm: realm, authenticationMethod: method)
        }
        // Decoded text is input like any other: the same rules as a URL or `set`.
        try validate()
    }

    /// Encodes the canonical fields under the keys `host`, `port`, `protocol`, `realm`,
    /// `authenticationMethod` and `proxyType`, leaving out those that are nil.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(host, forKey: .host)
        try container.encode(port, forKey: .port)
        try container.encodeIfPresent(`protocol`, forKey: .protocol)
        try container.encodeIfPresent(realm, forKey: .realm)
        try container.encode(authenticationMethod, forKey: .authenticationMethod)
        try container.encodeIfPresent(proxyType, forKey: .proxyType)
    }
}

extension ProtectionSpace {
    /// The same space with another realm and method: what a lookup falls back to.
    package func replacing(realm: String?, authenticationMethod: AuthenticationMethod) -> ProtectionSpace {
        if let proxyType {
            return ProtectionSpace(proxy: ProxyEndpoint(host: host, port: port, type: proxyType), realm: realm, authenticationMethod: authenticationMethod)
        }
        return ProtectionSpace(host: host, port: port, protocol: `protocol`, realm: realm, authenticationMethod: authenticationMethod)
    }

    /// The spaces whose defaults answer a lookup of this space, best first: this space, then the
    /// same realm under each other method of ``AuthenticationMethod/answeringMethods``.
    package var compatibleSpaces: [ProtectionSpace] {
        authenticationMethod.answeringMethods.map {
            $0 == authenticationMethod ? self : replacing(realm: realm, authenticationMethod: $0)
        }
    }
}
