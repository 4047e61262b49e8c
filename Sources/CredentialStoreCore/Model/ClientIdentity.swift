public import Foundation

/// A TLS client identity: a certificate chain and the private key of its leaf, what a server that
/// asks for a client certificate (`NSURLAuthenticationMethodClientCertificate`) is answered with.
///
/// The store keeps it in a protection space whose method is
/// ``AuthenticationMethod/clientCertificate``; the key is sealed like a password and the chain
/// with it, so neither the key nor the certificate's subject is ever on disk in the clear. The
/// private key never appears in `description` or a `dump`.
public struct ClientIdentity: Hashable, Sendable {
    /// The certificates in DER, the leaf (the identity's own) first, then the intermediates that
    /// lead to the server's trust anchor.
    public var certificateChain: [[UInt8]]
    /// The leaf's private key in DER (PKCS #8).
    public var privateKey: [UInt8]
    /// When the leaf certificate stops being valid (its `notAfter`), to the second. The store
    /// treats an identity past it as expired: listed, but never chosen as a space's default.
    public var expires: Date?

    /// Creates an identity from DER certificates (leaf first) and the leaf's PKCS #8 key.
    public init(certificateChain: [[UInt8]], privateKey: [UInt8], expires: Date? = nil) {
        self.certificateChain = certificateChain
        self.privateKey = privateKey
        self.expires = expires
    }
}

extension ClientIdentity: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The chain's length and the expiry; never the key.
    public var description: String {
        "ClientIdentity(\(certificateChain.count) certificate(s), privateKey: <redacted>\(expires.map { ", expires: \($0)" } ?? ""))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["certificateChain": "\(certificateChain.count) certificate(s)", "privateKey": "<redacted>", "expires": expires as Any], displayStyle: .struct)
    }
}
