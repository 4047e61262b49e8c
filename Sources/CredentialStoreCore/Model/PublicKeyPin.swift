import Foundation

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
