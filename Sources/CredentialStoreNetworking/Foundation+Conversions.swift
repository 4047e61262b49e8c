public import CredentialStore
#if canImport(FoundationNetworking)
public import FoundationNetworking
#else
public import Foundation
#endif

extension ProtectionSpace {
    /// Creates a value space from Foundation's `URLProtectionSpace`.
    ///
    /// Protocols and proxy types are read in any spelling in use: Apple's values (`"https"`,
    /// `"SOCKS"`) and swift-corelibs-foundation's constant names (`"NSURLProtectionSpaceHTTPS"`,
    /// `"NSURLProtectionSpaceSOCKSProxy"`), which corelibs uses as the values themselves. A proxy
    /// type that no spelling names is read as an HTTP proxy, because a proxy space must stay a
    /// proxy space (401 and 407 credentials are never mixed).
    public init(_ space: URLProtectionSpace) {
        let method = AuthenticationMethod(rawValue: space.authenticationMethod)
        if space.isProxy() {
            let type = space.proxyType.flatMap(ProxyType.init(name:)) ?? .http
            self.init(proxy: ProxyEndpoint(host: space.host, port: space.port, type: type), realm: space.realm, authenticationMethod: method)
        } else {
            self.init(host: space.host, port: space.port, protocol: space.protocol, realm: space.realm, authenticationMethod: method)
        }
    }
}

extension URLProtectionSpace {
    /// Creates a Foundation protection space from a value space.
    ///
    /// The protocol is written as the plain scheme (`"https"`), which is what both Apple's and
    /// corelibs' own URL loading put in the spaces they make; proxy types use the platform's
    /// `NSURLProtectionSpace…Proxy` constants.
    public convenience init(_ space: ProtectionSpace) {
        if let proxyType = space.proxyType {
            self.init(proxyHost: space.host, port: space.port, type: proxyType.foundationName,
                      realm: space.realm, authenticationMethod: space.authenticationMethod.rawValue)
        } else {
            self.init(host: space.host, port: space.port, protocol: space.protocol,
                      realm: space.realm, authenticationMethod: space.authenticationMethod.rawValue)
        }
    }
}

extension ProxyType {
    /// The platform's constant for this proxy type (its values differ between Apple and corelibs).
    var foundationName: String {
        switch self {
        case .http: NSURLProtectionSpaceHTTPProxy
        case .https: NSURLProtectionSpaceHTTPSProxy
        // The constant is deprecated (FTP is); its value is spelled out to keep the build clean.
        #if canImport(FoundationNetworking)
        case .ftp: "NSURLProtectionSpaceFTPProxy"
        #else
        case .ftp: "ftp"
        #endif
        case .socks: NSURLProtectionSpaceSOCKSProxy
        }
    }
}

extension Credential {
    /// Creates a credential from Foundation's `URLCredential`; `nil` when it has no user or no
    /// password (a certificate or trust credential, which this store does not hold).
    public init?(_ credential: URLCredential) {
        guard let user = credential.user, let password = credential.password else { return nil }
        self.init(user: user, password: password, persistence: Persistence(credential.persistence))
    }
}

extension URLCredential {
    /// Creates a Foundation credential from a stored one, keeping its persistence tier.
    public convenience init(_ credential: Credential) {
        self.init(user: credential.user, password: credential.password,
                  persistence: URLCredential.Persistence(credential.persistence))
    }
}

extension Persistence {
    /// The tier that matches Foundation's persistence; the cases correspond one to one.
    public init(_ persistence: URLCredential.Persistence) {
        switch persistence {
        case .none: self = .none
        case .forSession: self = .forSession
        case .permanent: self = .permanent
        case .synchronizable: self = .synchronizable
        @unknown default: self = .forSession
        }
    }
}

extension URLCredential.Persistence {
    /// Foundation's persistence for a store tier.
    public init(_ persistence: Persistence) {
        switch persistence {
        case .none: self = .none
        case .forSession: self = .forSession
        case .permanent: self = .permanent
        // corelibs deprecates the case (it cannot synchronize); the raw value names it without a
        // warning, and this store does honour the tier.
        case .synchronizable: self = URLCredential.Persistence(rawValue: 3) ?? .permanent
        }
    }
}
