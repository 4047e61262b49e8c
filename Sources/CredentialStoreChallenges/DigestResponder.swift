public import CredentialStoreCore
import CredentialStoreCrypto
import Foundation

/// Answers one HTTP Digest challenge (RFC 7616, with the RFC 2069 form when the server offers no qop):
/// MD5, SHA-256 and SHA-512-256, each also in its `-sess` form.
///
/// Keep one responder per challenge and reuse it: each call to
/// ``authorization(method:uri:credential:)`` counts the nonce up (`nc`), which is what lets a
/// server that tracks nonce counts accept a second request without a new round trip.
///
/// ```swift
/// var responder = try DigestResponder(challenge: challenge)
/// let value = try responder.authorization(method: "GET", uri: "/dir/index.html", credential: credential)
/// ```
///
/// When a later 401 carries a Digest challenge with `stale=true`, the password was right and only
/// the nonce expired: check ``challengeIsStale(_:)``, then ``renew(with:)`` and retry without
/// asking the user again.
public struct DigestResponder: Sendable {
    /// The Digest hash algorithms this responder computes.
    public enum Algorithm: String, Sendable, CaseIterable {
        /// MD5, the default when a challenge names none.
        case md5 = "MD5"
        /// MD5 with the session variant of A1 (keyed by both nonces).
        case md5Session = "MD5-sess"
        /// SHA-256.
        case sha256 = "SHA-256"
        /// SHA-256 with the session variant of A1.
        case sha256Session = "SHA-256-sess"
        /// SHA-512/256, RFC 7616's first preference.
        case sha512_256 = "SHA-512-256"
        /// SHA-512/256 with the session variant of A1.
        case sha512_256Session = "SHA-512-256-sess"

        /// Reads a challenge's `algorithm` value; the token is case-insensitive.
        package init?(token: String) {
            guard let match = Self.allCases.first(where: { ProtocolToken.asciiLowercased($0.rawValue) == ProtocolToken.asciiLowercased(token) }) else {
                return nil
            }
            self = match
        }

        package var isSession: Bool { self == .md5Session || self == .sha256Session || self == .sha512_256Session }

        package func hexDigest(_ text: String) -> String {
            let bytes = Array(text.utf8)
            let digest = switch self {
            case .md5, .md5Session: MD5.hash(bytes)
            case .sha256, .sha256Session: Sodium.sha256(bytes)
            case .sha512_256, .sha512_256Session: Sodium.sha512_256(bytes)
            }
            return DigestResponder.hex(digest)
        }
    }

    /// The challenge being answered.
    public private(set) var challenge: AuthenticationChallenge
    /// The algorithm the challenge asked for.
    public private(set) var algorithm: Algorithm
    /// The nonce count of the last response made for the current nonce (0 before the first).
    public private(set) var nonceCount: UInt32 = 0
    /// Whether responses use `qop=auth`; false for an RFC 2069 challenge without `qop`.
    public var usesQualityOfProtection: Bool { qopOffered }

    private var qopOffered: Bool
    private let makeClientNonce: @Sendable () -> String

    /// Prepares to answer `challenge`.
    ///
    /// - Parameters:
    ///   - challenge: A challenge with scheme `digest`.
    ///   - clientNonce: Makes each `cnonce`; the default gives 128 random bits in hex. Tests inject
    ///     a fixed value to reproduce the RFC 7616 examples.
    /// - Throws: `CredentialStorageError.Code.invalidInput` when the challenge is not Digest, lacks
    ///   a realm or nonce, names an algorithm other than MD5, SHA-256, SHA-512-256 and their `-sess` forms, or
    ///   offers a `qop` without `auth` (only `auth-int` is not supported).
    public init(
        challenge: AuthenticationChallenge,
        clientNonce: @escaping @Sendable () -> String = { DigestResponder.randomClientNonce() }
    ) throws {
        let (algorithm, qop) = try Self.validate(challenge)
        self.challenge = challenge
        self.algorithm = algorithm
        self.qopOffered = qop
        self.makeClientNonce = clientNonce
    }

    /// A fresh client nonce: 16 random bytes in hex.
    public static func randomClientNonce() -> String {
        hex(Sodium.randomBytes(16))
    }

    /// Whether `newChallenge` says only the nonce expired (`stale=true`), so the same credential
    /// should be retried with the new nonce instead of asking the user for another.
    ///
    /// A challenge for another realm is never stale for this one: it asks for other credentials.
    public func challengeIsStale(_ newChallenge: AuthenticationChallenge) -> Bool {
        newChallenge.scheme == "digest"
            && newChallenge.realm == challenge.realm
            && ProtocolToken.asciiLowercased(newChallenge.parameters["stale"] ?? "") == "true"
    }

    /// Answers `newChallenge` from now on; the nonce count restarts when the nonce changes.
    ///
    /// - Throws: As ``init(challenge:clientNonce:)``; the responder is unchanged on error.
    public mutating func renew(with newChallenge: AuthenticationChallenge) throws {
        let (algorithm, qop) = try Self.validate(newChallenge)
        if newChallenge.parameters["nonce"] != challenge.parameters["nonce"] { nonceCount = 0 }
        challenge = newChallenge
        self.algorithm = algorithm
        qopOffered = qop
    }

    /// The `Authorization` (or `Proxy-Authorization`) value for one request, counting the nonce up.
    ///
    /// - Parameters:
    ///   - method: The request method, e.g. `"GET"`.
    ///   - uri: The request target as sent on the request line, e.g. `"/dir/index.html"`.
    ///   - credential: The user and password; the persistence is not used.
    /// - Throws: `CredentialStorageError.Code.invalidInput` when the nonce count is exhausted
    ///   (a new challenge is needed) or the client nonce is not a valid quoted-string content.
    public mutating func authorization(method: String, uri: String, credential: Credential) throws -> String {
        let realm = challenge.realm ?? ""
        let nonce = challenge.parameters["nonce"] ?? ""
        let ha2 = algorithm.hexDigest("\(method):\(uri)")

        var fields: [String] = []
        fields.append(Self.usernameField(credential.user))
        fields.append("realm=" + Self.quoted(realm))
        fields.append("uri=" + Self.quoted(uri))
        if challenge.parameters["algorithm"] != nil { fields.append("algorithm=" + algorithm.rawValue) }
        fields.append("nonce=" + Self.quoted(nonce))

        let response: String
        if qopOffered {
            guard nonceCount < UInt32.max else {
                throw CredentialStorageError(.invalidInput, "the Digest nonce count is exhausted; request a new challenge")
            }
            nonceCount += 1
            let nc = Self.hex8(nonceCount)
            let cnonce = makeClientNonce()
            guard !cnonce.isEmpty, cnonce.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) else {
                throw CredentialStorageError(.invalidInput, "the Digest client nonce must be printable ASCII without quotes or backslashes")
            }
            let ha1 = sessionKey(credential, realm: realm, nonce: nonce, cnonce: cnonce)
            response = algorithm.hexDigest("\(ha1):\(nonce):\(nc):\(cnonce):auth:\(ha2)")
            fields.append("nc=" + nc)
            fields.append("cnonce=" + Self.quoted(cnonce))
            fields.append("qop=auth")
        } else {
            // RFC 2069: no qop, no nc, no cnonce.
            let ha1 = sessionKey(credential, realm: realm, nonce: nonce, cnonce: "")
            response = algorithm.hexDigest("\(ha1):\(nonce):\(ha2)")
        }
        fields.append("response=" + Self.quoted(response))
        if let opaque = challenge.parameters["opaque"] { fields.append("opaque=" + Self.quoted(opaque)) }
        // RFC 2617 servers do not know the parameter, so it is sent only to servers that offer it.
        if challenge.parameters["userhash"] != nil { fields.append("userhash=false") }
        return "Digest " + fields.joined(separator: ", ")
    }

    // MARK: Pieces

    private func sessionKey(_ credential: Credential, realm: String, nonce: String, cnonce: String) -> String {
        let ha1 = algorithm.hexDigest("\(credential.user):\(realm):\(credential.password)")
        return algorithm.isSession ? algorithm.hexDigest("\(ha1):\(nonce):\(cnonce)") : ha1
    }

    private static func validate(_ challenge: AuthenticationChallenge) throws -> (Algorithm, Bool) {
        guard challenge.scheme == "digest" else {
            throw CredentialStorageError(.invalidInput, "the challenge is \(challenge.scheme), not Digest; answer it with its own scheme")
        }
        guard challenge.realm != nil, let nonce = challenge.parameters["nonce"], !nonce.isEmpty else {
            throw CredentialStorageError(.invalidInput, "the Digest challenge has no realm or nonce; the server's challenge is incomplete")
        }
        let algorithm: Algorithm
        if let token = challenge.parameters["algorithm"] {
            guard let known = Algorithm(token: token) else {
                throw CredentialStorageError(.invalidInput, "the Digest algorithm \(token) is not supported; MD5, SHA-256, SHA-512-256 and their -sess forms are")
            }
            algorithm = known
        } else {
            algorithm = .md5
        }
        guard let qop = challenge.parameters["qop"] else {
            // The session forms need a cnonce, which RFC 2069 (no qop) has no place for.
            guard !algorithm.isSession else {
                throw CredentialStorageError(.invalidInput, "the Digest challenge asks for \(algorithm.rawValue) without qop, which cannot be answered")
            }
            return (algorithm, false)
        }
        let offered = qop.split(separator: ",").map { ProtocolToken.asciiLowercased($0.trimmingCharacters(in: .whitespaces)) }
        guard offered.contains("auth") else {
            throw CredentialStorageError(.invalidInput, "the Digest challenge offers qop \"\(qop)\"; only auth is supported")
        }
        return (algorithm, true)
    }

    /// `username="…"`, or `username*=UTF-8''…` (RFC 7616 §3.4.4 with RFC 5987 encoding) for a
    /// name a quoted-string cannot carry.
    private static func usernameField(_ user: String) -> String {
        if user.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return "username=" + quoted(user) }
        let attrChars = Set("!#$&+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        var encoded = ""
        for byte in user.utf8 {
            if attrChars.contains(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += "%" + hex([byte]).uppercased()
            }
        }
        return "username*=UTF-8''" + encoded
    }

    /// A quoted-string, with '"' and '\' escaped.
    package static func quoted(_ text: String) -> String {
        var result = "\""
        for character in text.unicodeScalars {
            if character == "\"" || character == "\\" { result.unicodeScalars.append("\\") }
            result.unicodeScalars.append(character)
        }
        return result + "\""
    }

    package static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hex8(_ value: UInt32) -> String {
        hex([UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
             UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)])
    }
}
