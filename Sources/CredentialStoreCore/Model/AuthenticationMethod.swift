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
