package import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one way credstore reads a URL (or a bare host) that names where a credential goes.
///
/// Browsers, password managers and the WHATWG URL standard read some texts differently from
/// Foundation's RFC 3986 parser: `https://bank.example.com\@evil.example.com/` is a URL of
/// `bank.example.com` to a browser (a backslash ends the host, as a slash does) but of
/// `evil.example.com` to Foundation, which takes all before the `@` for a user name. A credential
/// filed under the second reading answers the other site. So every door a URL comes through
/// (command line arguments, imported files, ``ProtectionSpace/init(url:realm:authenticationMethod:)``)
/// reads it here, and this reading either finds the host the WHATWG standard finds or refuses
/// the text with the reason:
///
/// - white space and control characters anywhere, and a backslash anywhere;
/// - anything but `scheme://` before the host (the standard's lenient `http:host` forms);
/// - a password before `@` always, a user name unless the door asks for ``UserInfo/userOnly``;
/// - a percent sign in the host (the standard decodes `%65` to `e`; the text then shows one
///   host and names another), a host that is not ASCII, or a character no host name has;
/// - a host whose last label is a number but which is not a plain dotted quad (the standard
///   reads `0x7f.1` and `2130706433` as addresses), an IPv6 address with a dotted part or zone,
///   an empty label, an `xn--` label that does not decode to letters, marks and digits;
/// - a port of 0, above 65535, or with anything but digits.
///
/// No refusal repeats the text, so that a password in it never reaches a message.
package struct URLReading: Equatable, Sendable {
    /// What a door accepts before the `@` of a URL.
    package enum UserInfo: Sendable {
        /// Nothing: a URL that names a place never carries who goes there.
        case refused
        /// A user name without a password (an import uses it as the credential's user).
        case userOnly
        /// Anything, read past and kept nowhere: a proxy variable's own login, which the HTTP
        /// client sends itself and which names no space.
        case discarded
    }

    /// The scheme, ASCII lowercased (`https`).
    package let scheme: String
    /// The host in ``ProtectionSpace``'s canonical form: lowercased, no IPv6 brackets, one
    /// trailing dot dropped.
    package let host: String
    /// The port the URL names, if it names one.
    package let port: Int?
    /// The port of the URL's space: the one it names, else its scheme's registered port
    /// (``ProtocolToken/registeredPort(_:)``), else 0.
    package var spacePort: Int {
        port ?? ProtocolToken.registeredPort(scheme) ?? 0
    }
    /// The user name before `@`, percent-decoded; only with ``UserInfo/userOnly``.
    package let user: String?
    /// What follows the host and port (path, query and fragment), as written.
    package let rest: String

    /// The message a text without `scheme://` and a host gets; a caller that knows the text
    /// holds no secret may word its own.
    package static let notAURL = "the text is not a URL with a host, such as https://api.example.com"

    /// Reads `text` as a URL with a host.
    ///
    /// - Throws: ``CredentialStorageError/Code/invalidInput`` with the reason, for every text
    ///   listed in the type's description; the message never contains the text.
    package init(_ text: String, userInfo: UserInfo = .refused) throws {
        // Every delimiter is looked for among the text's Unicode scalars, as the standard, curl
        // and git look for it. A Character is a grapheme cluster: `/` followed by a combining
        // mark is one Character, equal to no delimiter, and a reading by Characters went on past
        // it to an `@` that a browser reads in the path, and filed the credential for the host after it.
        let scalars = text.unicodeScalars
        // The scheme: a letter, then letters, digits, + - . (RFC 3986), then `://`.
        guard let colon = scalars.firstIndex(of: ":"), scalars[scalars.index(after: colon)...].starts(with: "//".unicodeScalars) else {
            throw Self.refusal(Self.notAURL)
        }
        let scheme = scalars[..<colon]
        guard let first = scheme.first, first.isASCII, first.properties.isAlphabetic,
              scheme.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0)) })
        else { throw Self.refusal(Self.notAURL) }
        // Before any split: a browser drops tabs and line breaks and reads on, so the text
        // around them is not what it looks like.
        if scalars.contains(where: Self.isSpaceOrControl) {
            throw Self.refusal("the URL holds white space or a control character; give it on its own, without them")
        }
        if scalars.contains("\\") {
            throw Self.refusal("the URL holds a backslash, which browsers read as a slash that ends the host; write / where a path is meant")
        }
        let afterScheme = scalars[scalars.index(colon, offsetBy: 3)...]
        let authorityEnd = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        var hostAndPort = authority
        var user: String?
        // The standard takes the last `@` of the authority as the end of the user information.
        if let at = authority.lastIndex(of: "@") {
            let info = authority[..<at]
            let infoColon = info.firstIndex(of: ":")
            if userInfo != .discarded, let infoColon, info.index(after: infoColon) < info.endIndex {
                throw Self.refusal("the URL carries a password before its host (user:password@host); a password never comes from a URL, so give the URL without it")
            }
            guard userInfo != .refused else {
                throw Self.refusal("the URL carries a user name before its host (user@host); give the URL without it and name the user separately")
            }
            let name = info[..<(infoColon ?? info.endIndex)]
            guard let decoded = Self.percentDecoded(Substring(name)) else {
                throw Self.refusal("the URL's user name is not UTF-8 text once percent-decoded")
            }
            user = decoded.isEmpty || userInfo == .discarded ? nil : decoded
            hostAndPort = authority[authority.index(after: at)...]
        }
        // The port follows the last colon, or the colon after an IPv6 literal's `]`.
        var hostText = hostAndPort
        var portText: Substring.UnicodeScalarView?
        if hostAndPort.first == "[" {
            guard let close = hostAndPort.firstIndex(of: "]") else {
                throw Self.refusal("the URL's host opens an IPv6 address with [ and does not close it")
            }
            hostText = hostAndPort[...close]
            let after = hostAndPort[hostAndPort.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { throw Self.refusal("the URL has text after its IPv6 address that is not a port") }
                portText = after.dropFirst()
            }
        } else if let portColon = hostAndPort.lastIndex(of: ":") {
            hostText = hostAndPort[..<portColon]
            portText = hostAndPort[hostAndPort.index(after: portColon)...]
        }
        guard !hostText.isEmpty else { throw Self.refusal(Self.notAURL) }
        // The standard ends the host at its first colon: an IPv6 address needs its brackets.
        guard hostText.first == "[" || !hostText.contains(":") else {
            throw Self.refusal("the URL's host holds a colon; write an IPv6 address in brackets, such as https://[2001:db8::1]:8443")
        }
        self.scheme = ProtocolToken.asciiLowercased(String(Substring(scheme)))
        self.host = try Self.host(String(Substring(hostText)))
        self.port = try portText.flatMap { try Self.port(Substring($0)) }
        self.user = user
        self.rest = String(Substring(afterScheme[authorityEnd...]))
    }

    /// The URL of this reading, spelled so that Foundation reads the same host: scheme, host,
    /// port and the rest, without the user name.
    package var url: URL? {
        URL(string: origin + rest)
    }

    /// `scheme://host[:port]`, the host in brackets when it is an IPv6 address.
    package var origin: String {
        let name = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        return "\(scheme)://\(name)\(port.map { ":\($0)" } ?? "")"
    }

    /// Reads a host on its own (a netrc `machine`, a git-credentials host): a name, a dotted
    /// IPv4 address, or an IPv6 address with or without brackets.
    ///
    /// - Returns: the host in ``ProtectionSpace``'s canonical form.
    /// - Throws: ``CredentialStorageError/Code/invalidInput`` for a host the type's rules
    ///   refuse; the message does not repeat it.
    package static func host(_ text: String) throws -> String {
        guard !text.isEmpty else { throw refusal(notAURL) }
        if text.unicodeScalars.contains(where: isSpaceOrControl) {
            throw refusal("the host holds white space or a control character")
        }
        if text.utf8.contains(UInt8(ascii: "%")) {
            throw refusal("the host holds percent-encoded bytes, which browsers decode into another name; write the host name as it is")
        }
        if text.utf8.contains(UInt8(ascii: "\\")) {
            throw refusal("the host holds a backslash, which browsers read as a slash that ends the host")
        }
        if text.hasPrefix("[") || text.utf8.contains(UInt8(ascii: ":")) {
            return try ipv6(text)
        }
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else {
            throw refusal("the host is not ASCII; write an internationalized name in its xn-- form")
        }
        guard text.utf8.allSatisfy(isHostByte) else {
            throw refusal("the host holds a character no host name has (only letters, digits, - _ and . are read)")
        }
        let lowered = ProtocolToken.asciiLowercased(text)
        var labels = lowered.split(separator: ".", omittingEmptySubsequences: false)
        // One trailing dot is the DNS root; any other empty label is a name no resolver agrees on.
        if labels.count > 1, labels.last == "" { labels.removeLast() }
        guard !labels.contains(where: \.isEmpty) else {
            throw refusal("the host has an empty label (two dots in a row, or a dot at its start)")
        }
        if let last = labels.last, isNumeric(last) {
            // The standard reads such a host as an IPv4 address in any of its old spellings
            // (hex, octal, fewer than four parts); only the plain dotted quad reads the same here.
            guard labels.count == 4, labels.allSatisfy(isDecimalOctet) else {
                throw refusal("the host ends in a number but is not an IPv4 address written as four decimal numbers (such as 192.0.2.1)")
            }
        }
        for label in labels where label.hasPrefix("xn--") {
            guard isValidACELabel(label.dropFirst(4)) else {
                throw refusal("the host has an xn-- label that does not decode to a valid internationalized name")
            }
        }
        return ProtectionSpace.canonicalHost(lowered)
    }

    // MARK: - Parts

    private static func ipv6(_ text: String) throws -> String {
        let inner = text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
        let invalid = refusal("the host is not a valid IPv6 address, or is one written with a dotted IPv4 part or a zone")
        // A dotted tail is read by the standard as hex groups, and a zone not at all.
        guard !inner.isEmpty, inner.utf8.allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") }) else { throw invalid }
        var address = in6_addr()
        guard inet_pton(AF_INET6, inner, &address) == 1 else { throw invalid }
        let canonical = ProtectionSpace.canonicalHost(inner)
        // inet_ntop writes some addresses (::ffff:a.b.c.d and the like) with a dotted tail,
        // where the standard writes hex groups: refused rather than stored under another spelling.
        guard !canonical.utf8.contains(UInt8(ascii: ".")) else { throw invalid }
        return canonical
    }

    private static func port(_ text: Substring) throws -> Int? {
        if text.isEmpty { return nil }
        let digits = text.drop(while: { $0 == "0" })
        guard text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), digits.count <= 5,
              let value = Int(digits.isEmpty ? "0" : digits), value <= 65535 else {
            throw refusal("the URL's port is not a number from 1 to 65535")
        }
        guard value != 0 else { throw refusal("the URL's port is 0, which no server listens on") }
        return value
    }

    private static func isSpaceOrControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x21 || (0x7F...0x9F).contains(scalar.value) || scalar.properties.isWhitespace
            || scalar.properties.generalCategory == .format
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."): true
        default: false
        }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    /// The standard's "ends in a number": all decimal digits, or `0x` and hex digits (none too).
    private static func isNumeric(_ label: Substring) -> Bool {
        if label.hasPrefix("0x") { return label.dropFirst(2).utf8.allSatisfy(isHexDigit) }
        return label.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    private static func isDecimalOctet(_ label: Substring) -> Bool {
        guard !label.isEmpty, label.count <= 3, label.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              label == "0" || !label.hasPrefix("0"), let value = Int(label) else { return false }
        return value <= 255
    }

    /// Whether the Punycode after `xn--` decodes to a label the standard keeps: letters, marks,
    /// decimal digits and hyphens, already lowercase and in NFKC (so IDNA mapping leaves it as
    /// it is). Narrower than UTS #46, never wider.
    private static func isValidACELabel(_ encoded: Substring) -> Bool {
        guard let decoded = punycodeDecoded(encoded), !decoded.isEmpty else { return false }
        let text = String(String.UnicodeScalarView(decoded))
        guard text == text.lowercased(), text == text.precomposedStringWithCompatibilityMapping,
              decoded.contains(where: { !$0.isASCII }) else { return false }
        return decoded.allSatisfy { scalar in
            switch scalar.properties.generalCategory {
            case .lowercaseLetter, .otherLetter, .modifierLetter, .nonspacingMark, .spacingMark, .decimalNumber: true
            default: scalar == "-"
            }
        }
    }

    /// RFC 3492's decoder; nil for text that is not Punycode.
    private static func punycodeDecoded(_ encoded: Substring) -> [Unicode.Scalar]? {
        let base = 36, tMin = 1, tMax = 26, skew = 38, damp = 700
        var output: [Unicode.Scalar] = []
        var input = Array(encoded.utf8)
        if let delimiter = input.lastIndex(of: UInt8(ascii: "-")) {
            output = input[..<delimiter].map { Unicode.Scalar($0) }
            input = Array(input[(delimiter + 1)...])
        }
        func digit(_ byte: UInt8) -> Int? {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): Int(byte - UInt8(ascii: "a"))
            case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0")) + 26
            default: nil
            }
        }
        func adapt(_ delta: Int, _ count: Int, _ first: Bool) -> Int {
            var delta = first ? delta / damp : delta / 2
            delta += delta / count
            var k = 0
            while delta > ((base - tMin) * tMax) / 2 {
                delta /= base - tMin
                k += base
            }
            return k + (base - tMin + 1) * delta / (delta + skew)
        }
        var n = 128, i = 0, bias = 72, position = 0
        while position < input.count {
            let oldI = i
            var w = 1, k = base
            while true {
                guard position < input.count, let d = digit(input[position]) else { return nil }
                position += 1
                guard d <= (Int(Int32.max) - i) / w else { return nil }
                i += d * w
                let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                if d < t { break }
                guard w <= Int(Int32.max) / (base - t) else { return nil }
                w *= base - t
                k += base
            }
            bias = adapt(i - oldI, output.count + 1, oldI == 0)
            guard i / (output.count + 1) <= Int(Int32.max) - n else { return nil }
            n += i / (output.count + 1)
            i %= output.count + 1
            guard let scalar = Unicode.Scalar(UInt32(n)) else { return nil }
            output.insert(scalar, at: i)
            i += 1
        }
        return output
    }

    /// `%XX` decoded; nil when the bytes are not UTF-8.
    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        let utf8 = Array(text.utf8)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "%"), index + 2 < utf8.count, isHexDigit(utf8[index + 1]), isHexDigit(utf8[index + 2]),
               let value = UInt8(String(decoding: utf8[(index + 1)...(index + 2)], as: UTF8.self), radix: 16) {
                bytes.append(value)
                index += 3
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func refusal(_ message: String) -> CredentialStorageError {
        CredentialStorageError(.invalidInput, message)
    }
}
