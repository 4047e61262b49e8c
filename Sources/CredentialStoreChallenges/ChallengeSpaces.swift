public import CredentialStoreCore
import CredentialStoreCrypto
public import Foundation

extension ProtectionSpace {
    /// The protection spaces a response asks credentials for: server spaces for a 401, proxy
    /// spaces for a 407, none for any other status.
    ///
    /// A 401 is answered from every `WWW-Authenticate` header and a 407 from every
    /// `Proxy-Authenticate` header (names compared case-insensitively); the other header is
    /// ignored, so a server's challenge can never become a proxy's space or the reverse. Each
    /// challenge gives one space, with the challenge's realm and a method from its scheme
    /// (`basic` → `AuthenticationMethod.httpBasic`, `digest` → `AuthenticationMethod.httpDigest`,
    /// `ntlm` → `AuthenticationMethod.ntlm`, `negotiate` → `AuthenticationMethod.negotiate`,
    /// any other → `AuthenticationMethod.default`). Identical spaces are listed once, in order of
    /// first appearance.
    ///
    /// A challenge without a realm gives a space whose realm is `nil` (or `""`): it names no
    /// protection space, so it must never be used to pick "whatever the origin holds";
    /// `CredentialChallengeResponder` ignores such challenges.
    ///
    /// - Parameters:
    ///   - url: The request URL; its scheme, host and port make the server spaces.
    ///   - status: The response's HTTP status code.
    ///   - headers: The response's header fields, in order; repeated names are allowed.
    ///   - proxy: The proxy the request went through; required for a 407.
    /// - Throws: `CredentialStorageError.Code.invalidInput` for a malformed challenge or a 407
    ///   without `proxy`; `CredentialStorageError.Code.invalidProtectionSpace` for a 401 whose
    ///   URL has no host.
    public static func spaces(
        for url: URL,
        status: Int,
        headers: [(name: String, value: String)],
        proxy: ProxyEndpoint? = nil
    ) throws -> [ProtectionSpace] {
        let headerName: String
        switch status {
        case 401: headerName = "www-authenticate"
        case 407: headerName = "proxy-authenticate"
        default: return []
        }
        // Checked before parsing: a 407 without a proxy is the caller's error whatever was sent.
        if status == 407, proxy == nil {
            throw CredentialStorageError(.invalidInput, "a 407 response names no proxy; pass the proxy the request went through")
        }
        let values = headers.filter { ProtocolToken.asciiLowercased($0.name) == headerName }.map(\.value)
        let challenges = try AuthenticationChallenge.parse(values)

        var spaces: [ProtectionSpace] = []
        var seen: Set<ProtectionSpace> = []
        for challenge in challenges {
            let method = authenticationMethod(forScheme: challenge.scheme)
            let space: ProtectionSpace
            if status == 407, let proxy {
                space = ProtectionSpace(proxy: proxy,
                                        realm: challenge.realm, authenticationMethod: method)
            } else {
                space = try ProtectionSpace(url: url, realm: challenge.realm, authenticationMethod: method)
            }
            if seen.insert(space).inserted { spaces.append(space) }
        }
        return spaces
    }

    /// The method a challenge's (lowercased) scheme asks for.
    package static func authenticationMethod(forScheme scheme: String) -> AuthenticationMethod {
        switch scheme {
        case "basic": .httpBasic
        case "digest": .httpDigest
        case "ntlm": .ntlm
        case "negotiate": .negotiate
        default: .default
        }
    }
}
