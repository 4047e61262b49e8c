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
