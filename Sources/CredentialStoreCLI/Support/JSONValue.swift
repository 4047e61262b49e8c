import CredentialStore

/// A JSON value with its keys in the order docs/cli.md lists them.
///
/// Written by hand rather than with `JSONEncoder`: the key order is part of the documented output,
/// and `credstore get --json` should not pay for an encoder's start-up.
package enum JSONValue {
    case string(String)
    case number(Int)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([(String, JSONValue)])

    /// An optional string, `null` when absent.
    package static func string(_ text: String?) -> JSONValue {
        text.map { .string($0) } ?? .null
    }

    /// The value on one line, without spaces.
    package var rendered: String {
        var text = ""
        render(into: &text)
        return text
    }

    private func render(into text: inout String) {
        switch self {
        case .string(let value):
            Self.quote(value, into: &text)
        case .number(let value):
            text += String(value)
        case .bool(let value):
            text += value ? "true" : "false"
        case .null:
            text += "null"
        case .array(let values):
            text += "["
            for (position, value) in values.enumerated() {
                if position > 0 { text += "," }
                value.render(into: &text)
            }
            text += "]"
        case .object(let members):
            text += "{"
            for (position, (key, value)) in members.enumerated() {
                if position > 0 { text += "," }
                Self.quote(key, into: &text)
                text += ":"
                value.render(into: &text)
            }
            text += "}"
        }
    }

    /// RFC 8259 string escaping; everything else is written as UTF-8.
    private static func quote(_ value: String, into text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{08}": text += "\\b"
            case "\u{0C}": text += "\\f"
            // Valid JSON may carry C1 controls, bidi overrides and invisible characters raw, but
            // `--json` is read on terminals too, where they drive the terminal, reorder the line
            // or hide.
            case _ where FieldRules.isDisplayControl(scalar):
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
