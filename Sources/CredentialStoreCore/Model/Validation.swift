#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The rules every credential and protection space passes before it enters a store, from any
/// source: the library's `set`, a netrc or git-credential import, a sync bundle, a decoded space.
///
/// Kept in one place so that no path can apply a weaker copy. Stored text ends up in line
/// protocols (git's credential helper, netrc files, `credstore get`'s one line) and on terminals,
/// where a carriage return, a line feed or a NUL would end a value early and let the rest be read
/// as other fields: `password=pw\nhost=github.com` is two lines to git.
package enum FieldRules {
    /// Whether `text` holds no CR, LF or NUL, the three bytes that end or cut a line.
    package static func isLineSafe(_ text: some StringProtocol) -> Bool {
        // Over the contiguous bytes where there are some: iterating `String.UTF8View` costs several
        // times more, and every lookup checks its realm and method.
        if let safe = text.utf8.withContiguousStorageIfAvailable({ !$0.contains { $0 == 0x0A || $0 == 0x0D || $0 == 0x00 } }) {
            return safe
        }
        return !text.utf8.contains { $0 == 0x0A || $0 == 0x0D || $0 == 0x00 }
    }

    /// Throws ``CredentialStorageError/Code/invalidInput`` naming `field` (never quoting its
    /// value, which may be a secret) when `text` holds a CR, LF or NUL.
    package static func checkLineSafe(_ text: some StringProtocol, field: String) throws {
        guard isLineSafe(text) else {
            throw CredentialStorageError(.invalidInput, "the \(field) contains a line break or a NUL character, which no line protocol can carry; it was refused")
        }
    }

    /// Whether a scalar is one a terminal acts on, or shows as nothing, rather than prints: C0
    /// controls, DEL, C1 controls (U+0080–U+009F, which terminals honour as CSI, OSC … even UTF-8
    /// encoded), format characters (the bidirectional overrides that reorder what is shown, the
    /// zero-width spaces and joiners, the soft hyphen, the byte-order mark, tags), the line and
    /// paragraph separators, and the combining grapheme joiner: so that `eve` and `eve\u{200B}`
    /// are never shown alike.
    package static func isDisplayControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x20...0x7E: return false
        case 0x034F: return true
        default:
            switch scalar.properties.generalCategory {
            case .format, .lineSeparator, .paragraphSeparator: return true
            default: return false
            }
        }
    }

    /// `text` with every display control written as a Swift escape (`\n`, `\u{1B}`, `\u{9B}`), so
    /// stored text shown on a terminal can neither break a line nor drive the terminal.
    package static func displayEscaped(_ text: some StringProtocol) -> String {
        guard text.unicodeScalars.contains(where: isDisplayControl) else { return String(text) }
        var escaped = ""
        for scalar in text.unicodeScalars {
            if isDisplayControl(scalar) {
                escaped += scalar.escaped(asASCII: true)
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}

extension Credential {
    /// Checks the user name and password against ``FieldRules`` and `space` against the space
    /// rules: the one check the storage's `set` paths and a sync import make.
    ///
    /// - Throws: ``CredentialStorageError/Code/invalidInput`` for a CR, LF or NUL in any field or
    ///   a user or password over its length limit, ``CredentialStorageError/Code/invalidProtectionSpace``
    ///   for a space a store cannot key.
    package func validate(in space: ProtectionSpace) throws {
        try Self.validate(user: user, password: password)
        if hasDetails { try validateDetails() }
        try space.validate()
    }

    /// The longest label, and the longest attribute name, in UTF-8 bytes.
    package static let maximumLabelBytes = 4096
    package static let maximumAttributeNameBytes = 1024
    /// The most attributes one credential carries.
    package static let maximumAttributeCount = 256
    /// Every expiry credstore keeps, in seconds since 1970: 1970-01-01T00:00:00Z through
    /// 9999-12-31T23:59:59Z, a range every date conversion and every calendar reaches.
    package static let expiryRange: ClosedRange<Int64> = 0...253_402_300_799

    /// Checks the fields beyond user and password: refresh token, label, attribute names and
    /// values are single lines; a comment may hold line breaks but no NUL; an attribute name is
    /// not empty and holds no `=` (`NAME=VALUE` is how the CLI and search name one); and all of
    /// them with the password fit in one sync bundle item, as the password alone must.
    ///
    /// - Throws: ``CredentialStorageError/Code/invalidInput``, naming the field, never its value.
    /// Whether the expiry, if any, is within ``expiryRange``.
    package var hasExpiryInRange: Bool {
        expiresEpochSeconds.map(Self.expiryRange.contains) ?? true
    }

    package func validateDetails() throws {
        if !hasExpiryInRange {
            throw CredentialStorageError(.invalidInput, "the expiry is outside 1970-01-01T00:00:00Z through 9999-12-31T23:59:59Z; it was refused")
        }
        if let refreshToken { try FieldRules.checkLineSafe(refreshToken, field: "refresh token") }
        if let label {
            try FieldRules.checkLineSafe(label, field: "label")
            guard label.utf8.count <= Self.maximumLabelBytes else {
                throw CredentialStorageError(.invalidInput, "the label is longer than \(Self.maximumLabelBytes) bytes; it was refused")
            }
        }
        if let comment, comment.utf8.contains(0) {
            throw CredentialStorageError(.invalidInput, "the comment holds a NUL byte; it was refused")
        }
        guard attributes.count <= Self.maximumAttributeCount else {
            throw CredentialStorageError(.invalidInput, "a credential carries at most \(Self.maximumAttributeCount) attributes; it was refused")
        }
        for (name, value) in attributes {
            try FieldRules.checkLineSafe(name, field: "attribute name")
            try FieldRules.checkLineSafe(value, field: "value of an attribute")
            guard !name.isEmpty, !name.contains("="), name.utf8.count <= Self.maximumAttributeNameBytes else {
                throw CredentialStorageError(.invalidInput, "an attribute name must be 1 to \(Self.maximumAttributeNameBytes) bytes without `=`; it was refused")
            }
        }
        var total = password.utf8.count + (refreshToken?.utf8.count ?? 0) + (label?.utf8.count ?? 0) + (comment?.utf8.count ?? 0)
        for (name, value) in attributes { total += name.utf8.count + value.utf8.count }
        guard total <= Self.maximumPasswordBytes else {
            throw CredentialStorageError(.invalidInput, "the password, refresh token, label, comment and attributes together are longer than \(Self.maximumPasswordBytes) bytes, more than a sync bundle carries; it was refused")
        }
    }

    /// The longest user name, in UTF-8 bytes, as long as the longest realm.
    package static let maximumUserBytes = 4096
    /// The longest password, in UTF-8 bytes: with the longest host, realm and user it still fits
    /// in one sync bundle item (1 MiB), so a credential the store takes can always be exported
    /// and synced.
    package static let maximumPasswordBytes = 1_000_000

    /// Checks a user name and, when there is one, a password (a sync deletion carries none).
    package static func validate(user: String?, password: String?) throws {
        if let user {
            try FieldRules.checkLineSafe(user, field: "user name")
            guard user.utf8.count <= maximumUserBytes else {
                throw CredentialStorageError(.invalidInput, "the user name is longer than \(maximumUserBytes) bytes; it was refused")
            }
        }
        if let password {
            try FieldRules.checkLineSafe(password, field: "password")
            guard password.utf8.count <= maximumPasswordBytes else {
                throw CredentialStorageError(.invalidInput, "the password is longer than \(maximumPasswordBytes) bytes, more than a sync bundle carries; it was refused")
            }
        }
    }
}

extension ProtectionSpace {
    /// Checks what a store needs before it keys anything by this space: what
    /// ``init(url:realm:authenticationMethod:)``, the canonical decoding and the `Codable` decoding
    /// check, and what `set` checks for a space built field by field.
    ///
    /// - Throws: ``CredentialStorageError/Code/invalidInput`` when the host, realm, protocol or
    ///   method holds a CR, LF or NUL; ``CredentialStorageError/Code/invalidProtectionSpace`` for
    ///   an empty or malformed host, a port outside 0–65535 (0 only where the protocol has no
    ///   default), a protocol that is not a URL scheme, or an over-long field.
    package func validate() throws {
        // Every lookup validates its space: the common one passes in one pass over each field's
        // bytes; anything else (or anything wrong) takes the full checks below, which say why.
        if passesASCIIChecks { return }
        try FieldRules.checkLineSafe(host, field: "host")
        if let realm { try FieldRules.checkLineSafe(realm, field: "realm") }
        if let `protocol` { try FieldRules.checkLineSafe(`protocol`, field: "protocol") }
        try FieldRules.checkLineSafe(authenticationMethod.rawValue, field: "authentication method")
        guard !host.isEmpty else {
            throw CredentialStorageError(.invalidProtectionSpace, "the protection space has an empty host; give a host name or address")
        }
        // What a URL's host can be: no whitespace, controls or delimiters (WHATWG's forbidden host
        // code points), and a colon or percent sign only in an IPv6 address (with its zone).
        guard host.utf8.count <= 1024,
              !host.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F || Self.isForbiddenInHost($0) }),
              !host.unicodeScalars.contains(where: FieldRules.isDisplayControl),
              !host.hasSuffix("."),
              !(host.utf8.contains(0x3A) || host.utf8.contains(0x25)) || Self.isIPv6Address(host)
        else {
            throw CredentialStorageError(.invalidProtectionSpace, "the protection space's host contains spaces, control characters, delimiters (/ ? # @ [ ] : …) or a trailing empty label; give the host name alone")
        }
        guard (0...65535).contains(port) else {
            throw CredentialStorageError(.invalidProtectionSpace, "the port \(port) is outside 0–65535")
        }
        if let `protocol` {
            // What a URL's scheme may be (RFC 3986 §3.1), lowercased as the canonical token is.
            let bytes = Array(`protocol`.utf8)
            guard let first = bytes.first, (0x61...0x7A).contains(first),
                  bytes.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E })
            else {
                throw CredentialStorageError(.invalidProtectionSpace, "the protection space's protocol is not a URL scheme (letters, digits, +, - and .)")
            }
        }
        guard (realm?.utf8.count ?? 0) <= 4096, authenticationMethod.rawValue.utf8.count <= 256,
              (`protocol`?.utf8.count ?? 0) <= 64 else {
            throw CredentialStorageError(.invalidProtectionSpace, "the protection space's realm, method or protocol is too long")
        }
    }

    /// Whether the space passes every check of ``validate()``, for a host of printable ASCII
    /// without a colon or a percent sign (no IPv6 address). On such a host the scalar checks of
    /// ``validate()`` (display controls, a trailing ".") are the byte checks made here; `false`
    /// says only that the full checks must decide.
    private var passesASCIIChecks: Bool {
        guard (0...65535).contains(port) else { return false }
        let hostPasses = host.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            guard let last = bytes.last, bytes.count <= 1024, last != 0x2E else { return false }
            for byte in bytes where byte <= 0x20 || byte >= 0x7F || byte == 0x3A || byte == 0x25 || Self.isForbiddenInHost(byte) {
                return false
            }
            return true
        }
        guard hostPasses == true else { return false }
        if let `protocol` {
            let schemePasses = `protocol`.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
                guard let first = bytes.first, bytes.count <= 64, (0x61...0x7A).contains(first) else { return false }
                return bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E }
            }
            guard schemePasses == true else { return false }
        }
        if let realm, realm.utf8.count > 4096 || !FieldRules.isLineSafe(realm) { return false }
        let method = authenticationMethod.rawValue
        return method.utf8.count <= 256 && FieldRules.isLineSafe(method)
    }

    /// `# / < > ? @ [ \ ] ^ |` and the quote: bytes that end a URL's host or cannot be in one.
    /// A switch, not a `Set`: every `credstore get` validates one host, and a set's first use
    /// costs the process more than the check itself.
    private static func isForbiddenInHost(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x22, 0x23, 0x2F, 0x3C, 0x3E, 0x3F, 0x40, 0x5B, 0x5C, 0x5D, 0x5E, 0x7C: true
        default: false
        }
    }

    /// Whether `host` is an IPv6 address, with or without a zone (`fe80::1%eth0`).
    private static func isIPv6Address(_ host: String) -> Bool {
        let address = host.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        guard address[0].utf8.contains(UInt8(ascii: ":")) else { return false }
        var bytes = in6_addr()
        return inet_pton(AF_INET6, String(address[0]), &bytes) == 1 && (address.count == 1 || !address[1].isEmpty)
    }
}
