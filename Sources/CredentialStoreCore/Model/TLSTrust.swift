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

/// A pin of a server's public key: the SHA-256 digest of its DER SubjectPublicKeyInfo, in the form
/// curl's `--pinnedpubkey sha256//…` and HPKP write it.
public struct PublicKeyPin: Hashable, Sendable, Comparable, LosslessStringConvertible, Codable {
    /// The 32-byte SHA-256 digest of the SubjectPublicKeyInfo.
    public let digest: [UInt8]

    /// Creates a pin from a 32-byte digest; `nil` for any other length.
    public init?(digest: [UInt8]) {
        guard digest.count == 32 else { return nil }
        self.digest = digest
    }

    /// Parses `sha256//BASE64` (curl's form) or the bare base64 of a 32-byte digest.
    public init?(_ description: String) {
        let base64 = description.hasPrefix("sha256//") ? String(description.dropFirst(8)) : description
        guard let data = Data(base64Encoded: base64), let pin = PublicKeyPin(digest: Array(data)) else { return nil }
        self = pin
    }

    /// `sha256//` and the digest in base64.
    public var description: String { "sha256//" + Data(digest).base64EncodedString() }

    /// Whether `digest` is this pin, compared in constant time: how long the comparison takes says
    /// nothing about how much of a presented key's digest matched.
    public func matches(_ digest: [UInt8]) -> Bool {
        guard digest.count == self.digest.count else { return false }
        var difference: UInt8 = 0
        for index in digest.indices { difference |= digest[index] ^ self.digest[index] }
        return difference == 0
    }

    public static func < (lhs: PublicKeyPin, rhs: PublicKeyPin) -> Bool { lhs.digest.lexicographicallyPrecedes(rhs.digest) }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let pin = PublicKeyPin(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a sha256// public-key pin"))
        }
        self = pin
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// What a server must present, beyond a name it is valid for: the public keys it may use (pins)
/// and the certificates besides the system's roots that may anchor its chain.
///
/// The store keeps it in a protection space whose method is ``AuthenticationMethod/serverTrust``.
/// With pins, a chain is accepted only if one of its certificates carries a pinned key; keep a
/// backup pin, of a key not yet in use, so that rotating the server's key does not lock you out.
public struct ServerTrust: Hashable, Sendable {
    /// The pinned public keys; empty when only the chain's validity is checked.
    public var pins: Set<PublicKeyPin>
    /// Extra trust anchors, in DER: a private CA, or a self-signed server certificate.
    public var anchors: [[UInt8]]

    /// Creates a trust decision from pins and extra anchors.
    public init(pins: Set<PublicKeyPin> = [], anchors: [[UInt8]] = []) {
        self.pins = pins
        self.anchors = anchors
    }
}
