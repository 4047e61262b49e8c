import CredentialStoreCore
import CredentialStoreCrypto

/// One challenge from a `WWW-Authenticate` or `Proxy-Authenticate` header (RFC 7235 §2.1).
///
/// The scheme and the parameter names are lowercased, because RFC 7235 makes them
/// case-insensitive and lookups should not have to care; parameter values are kept exactly as
/// sent (quoted strings unescaped), because a realm is case-sensitive.
///
/// ```swift
/// let challenges = try AuthenticationChallenge.parse([#"Newauth realm="apps", Basic realm="simple""#])
/// challenges.map(\.scheme)   // ["newauth", "basic"]
/// ```
public struct AuthenticationChallenge: Hashable, Sendable {
    /// The authentication scheme, lowercased (`"basic"`, `"digest"`, `"negotiate"` …).
    public var scheme: String
    /// The auth-params by lowercased name; values unquoted and unescaped.
    public var parameters: [String: String]
    /// The token68 form of credentials data (as Negotiate and NTLM send), if the challenge has one.
    ///
    /// A challenge carries either a token68 or parameters, never both.
    public var token68: String?

    /// Creates a challenge; the scheme and parameter names are lowercased as the parser would.
    public init(scheme: String, parameters: [String: String] = [:], token68: String? = nil) {
        self.scheme = ProtocolToken.asciiLowercased(scheme)
        var lowered: [String: String] = [:]
        for (name, value) in parameters { lowered[ProtocolToken.asciiLowercased(name)] = value }
        self.parameters = lowered
        self.token68 = token68
    }

    /// The `realm` parameter, which names the protection space the challenge belongs to.
    public var realm: String? { parameters["realm"] }

    /// The most header bytes one call parses; beyond it the input is refused rather than
    /// processed, so a hostile server cannot make the client spend unbounded time or memory.
    public static let maximumHeaderBytes = 64 * 1024

    /// Parses the values of every `WWW-Authenticate` (or every `Proxy-Authenticate`) header of
    /// one response into its challenges, in order.
    ///
    /// Each value may hold several challenges separated by commas, and a response may spread its
    /// challenges over several header fields; both are handled (RFC 7235 §4.1). Empty list
    /// elements are skipped, as the list rule of RFC 7230 §7 requires.
    ///
    /// - Parameter headerValues: The field values, one per header line.
    /// - Returns: The challenges in the order they appear.
    /// - Throws: `CredentialStorageError` with code `CredentialStorageError.Code.invalidInput`
    ///   when a value does not follow the grammar, repeats a parameter, is not UTF-8, or the
    ///   values together exceed ``maximumHeaderBytes``.
    public static func parse(_ headerValues: [String]) throws -> [AuthenticationChallenge] {
        var total = 0
        for value in headerValues {
            total += value.utf8.count
            guard total <= maximumHeaderBytes else {
                throw CredentialStorageError(.invalidInput, "the authentication challenge headers exceed \(maximumHeaderBytes) bytes; the response is refused")
            }
        }
        var challenges: [AuthenticationChallenge] = []
        for value in headerValues {
            var parser = ChallengeParser(Array(value.utf8))
            try parser.parseList(into: &challenges)
        }
        return challenges
    }
}

/// A single-pass parser over one field value's bytes.
///
/// Every step either consumes at least one byte or ends the loop it is in, so the parse is linear
/// in the input and cannot loop forever.
private struct ChallengeParser {
    private let bytes: [UInt8]
    private var position = 0

    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    private var atEnd: Bool { position >= bytes.count }

    private func peek(_ offset: Int = 0) -> UInt8? {
        let index = position + offset
        return index < bytes.count ? bytes[index] : nil
    }

    private func fail(_ what: String) -> CredentialStorageError {
        CredentialStorageError(.invalidInput, "the authentication challenge is malformed: \(what) at byte \(position); the server sent a header that RFC 7235 does not allow")
    }

    // MARK: Character classes (RFC 7230 §3.2.6, RFC 7235 §2.1)

    private static func isTChar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    private static func isToken68Char(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "-._~+/".utf8.contains(byte)
        }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    // MARK: Pieces

    /// Skips OWS, including an obsolete line fold (CRLF or LF followed by SP/HTAB), which a
    /// recipient must treat as a space (RFC 7230 §3.2.4); that lets examples copied from RFCs parse.
    private mutating func skipWhitespace() {
        while let byte = peek() {
            if Self.isWhitespace(byte) {
                position += 1
            } else if byte == 0x0D, peek(1) == 0x0A, let next = peek(2), Self.isWhitespace(next) {
                position += 3
            } else if byte == 0x0A, let next = peek(1), Self.isWhitespace(next) {
                position += 2
            } else {
                return
            }
        }
    }

    /// Skips whitespace and the separators of empty list elements.
    private mutating func skipSeparators() {
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: ",") else { return }
            position += 1
        }
    }

    private mutating func token() -> ArraySlice<UInt8>? {
        let start = position
        while let byte = peek(), Self.isTChar(byte) { position += 1 }
        return position > start ? bytes[start..<position] : nil
    }

    private func string(_ slice: some Collection<UInt8>) throws -> String {
        let text = String(decoding: slice, as: UTF8.self)
        // Decoding repairs bad sequences; refusing them instead keeps two different byte strings
        // from turning into one realm.
        guard text.utf8.elementsEqual(slice) else { throw fail("text that is not UTF-8") }
        return text
    }

    private mutating func quotedString() throws -> String {
        position += 1  // the opening quote
        var value: [UInt8] = []
        while let byte = peek() {
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return try string(value)
            case UInt8(ascii: "\\"):
                // quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text )
                guard let escaped = peek(), escaped == 0x09 || escaped >= 0x20, escaped != 0x7F else {
                    throw fail("a backslash with nothing valid to escape")
                }
                value.append(escaped)
                position += 1
            case 0x09, 0x20...0x7E, 0x80...0xFF:
                value.append(byte)
            default:
                throw fail("a control character in a quoted string")
            }
        }
        throw fail("a quoted string without its closing quote")
    }

    /// Whether a token68 starts here: token68 characters, '=' padding, then the end of the
    /// challenge. `realm=apps` is not one, because something follows the '='.
    private func token68Length() -> Int? {
        var index = position
        while index < bytes.count, Self.isToken68Char(bytes[index]) { index += 1 }
        guard index > position else { return nil }
        while index < bytes.count, bytes[index] == UInt8(ascii: "=") { index += 1 }
        let length = index - position
        while index < bytes.count, Self.isWhitespace(bytes[index]) { index += 1 }
        return index == bytes.count || bytes[index] == UInt8(ascii: ",") ? length : nil
    }

    /// Whether an auth-param (`token BWS "="`) starts here, as opposed to the scheme of the next challenge.
    private func paramStartsHere() -> Bool {
        var index = position
        while index < bytes.count, Self.isTChar(bytes[index]) { index += 1 }
        guard index > position else { return false }
        while index < bytes.count, Self.isWhitespace(bytes[index]) { index += 1 }
        return index < bytes.count && bytes[index] == UInt8(ascii: "=")
    }

    // MARK: Grammar

    /// `1#challenge`, appending to `challenges`.
    package mutating func parseList(into challenges: inout [AuthenticationChallenge]) throws {
        while true {
            skipSeparators()
            if atEnd { return }
            challenges.append(try challenge())
        }
    }

    /// `auth-scheme [ 1*SP ( token68 / #auth-param ) ]`; leaves the position at the end or at
    /// the comma that precedes the next challenge.
    private mutating func challenge() throws -> AuthenticationChallenge {
        guard let schemeBytes = token() else { throw fail("a character where an authentication scheme should start") }
        let scheme = ProtocolToken.asciiLowercased(try string(schemeBytes))
        var challenge = AuthenticationChallenge(scheme: scheme)
        let afterScheme = position
        skipWhitespace()
        if atEnd || peek() == UInt8(ascii: ",") { return challenge }
        guard position > afterScheme else { throw fail("no space after the scheme") }

        // Tried first: `abc==` also starts like `name =`, but a parameter needs a value after '='.
        if let length = token68Length() {
            challenge.token68 = try string(bytes[position..<position + length])
            position += length
            skipWhitespace()
            return challenge
        }
        while true {
            guard let nameBytes = token() else { throw fail("a character where a parameter name should start") }
            let name = ProtocolToken.asciiLowercased(try string(nameBytes))
            skipWhitespace()
            guard peek() == UInt8(ascii: "=") else { throw fail("a parameter without '='") }
            position += 1
            skipWhitespace()
            let value: String
            if peek() == UInt8(ascii: "\"") {
                value = try quotedString()
            } else if let valueBytes = token() {
                value = try string(valueBytes)
            } else {
                throw fail("a parameter without a value")
            }
            // RFC 7235 §2.2: each parameter name must occur only once per challenge; which of two
            // realms to believe is not a guess to make.
            guard challenge.parameters.updateValue(value, forKey: name) == nil else {
                throw fail("the parameter \"\(name)\" given twice")
            }
            skipWhitespace()
            if atEnd { return challenge }
            guard peek() == UInt8(ascii: ",") else { throw fail("text after a parameter value") }
            // A comma either continues this challenge's parameters or starts the next challenge;
            // only a following `name =` says which.
            let comma = position
            skipSeparators()
            if atEnd { return challenge }
            guard paramStartsHere() else {
                position = comma
                return challenge
            }
        }
    }
}
