#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
