/// How a server or proxy wants to be authenticated, named as Foundation names it.
///
/// The raw values are Foundation's constant names (`"NSURLAuthenticationMethodHTTPBasic"` …), so a
/// method read from `URLProtectionSpace.authenticationMethod` converts without a table. The set is
/// open: any raw value is accepted and compared exactly.
public struct AuthenticationMethod: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// Foundation's constant name for the method.
    public let rawValue: String

    /// Creates a method from Foundation's constant name.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Whatever the server asks for; what a protection space without a method means.
    public static let `default` = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodDefault")
    /// HTTP Basic (RFC 7617).
    public static let httpBasic = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodHTTPBasic")
    /// HTTP Digest (RFC 7616).
    public static let httpDigest = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodHTTPDigest")
    /// A login form in an HTML page.
    public static let htmlForm = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodHTMLForm")
    /// NTLM.
    public static let ntlm = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodNTLM")
    /// Kerberos or NTLM through SPNEGO.
    public static let negotiate = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodNegotiate")
    /// A TLS client certificate.
    public static let clientCertificate = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodClientCertificate")
    /// Trust evaluation of the server's certificate.
    public static let serverTrust = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodServerTrust")

    /// Foundation's constant name, as `rawValue` holds it.
    public var description: String { rawValue }

    /// Decodes the method from a single string, Foundation's constant name; any name is accepted.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes the method as a single string, Foundation's constant name, not as a keyed object.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

extension AuthenticationMethod {
    /// The methods whose stored credentials answer a request for this method, best first.
    ///
    /// For the password methods ``default`` means "any": a credential stored without a method
    /// answers Basic and Digest. Basic is the method a plain password is sent with, so a credential
    /// stored for Basic answers ``default`` requests and Digest ones too (Digest never sends the
    /// password itself). A credential stored for Digest answers only Digest: sent as Basic, a
    /// password its owner meant never to cross the wire would. Every other method answers only
    /// itself.
    public var answeringMethods: [AuthenticationMethod] {
        switch self {
        case .default: [.default, .httpBasic]
        case .httpBasic: [.httpBasic, .default]
        case .httpDigest: [.httpDigest, .default, .httpBasic]
        default: [self]
        }
    }

    /// The methods whose credential is a user and password that answers a 401 or 407: any,
    /// Basic and Digest.
    package static let passwordMethods: Set<AuthenticationMethod> = [.default, .httpBasic, .httpDigest]

    /// The methods whose credentials may go out as Basic (by git, curl through netrc, or a caller
    /// that asked without a method), in the order a lookup without a method asks for them: any,
    /// then Basic. Never Digest, NTLM or a form.
    package static let sentAsBasic: [AuthenticationMethod] = AuthenticationMethod.default.answeringMethods
}
