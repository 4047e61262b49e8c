/// A strict reader of RFC 4180 CSV, for the password managers' exports `credstore import --from`
/// reads.
///
/// Written here rather than taken from a CSV package: the exports carry every password a user
/// has, and a malformed file must be refused whole (nothing imported), not read leniently. The
/// packages at hand accept what this refuses: SwiftCSV 0.10.0 ends an unterminated quoted field
/// silently at the end of the file and drops an empty last field of a file without a final
/// newline (an empty password or note), and either package would be a dependency of the shipped
/// binary for some 100 lines of parsing. It works on Unicode scalars, as the netrc reader does:
/// Swift's Characters fuse "\r\n" into one, which hides line ends from a character comparison.
package enum CSV {
    /// One record: its fields, and the line of the file it starts on (from 1).
    package struct Record: Equatable, Sendable {
        package var fields: [String]
        package var line: Int

        package init(fields: [String], line: Int) {
            self.fields = fields
            self.line = line
        }
    }

    /// Why a file is not CSV, with the line where it shows.
    package struct Malformed: Error, Equatable, Sendable {
        package var line: Int
        package var reason: String

        package init(line: Int, reason: String) {
            self.line = line
            self.reason = reason
        }
    }

    /// Reads every record of `text`.
    ///
    /// Fields are separated by commas and records by CRLF, LF or a lone CR. A field that starts
    /// with a double quote runs to the next lone double quote, and holds commas, line breaks and
    /// doubled quotes (`""` for `"`). A byte-order mark at the start is dropped; a final line end
    /// makes no empty record, and neither does an empty line.
    ///
    /// - Throws: ``Malformed`` for a quoted field without its closing quote, text between a
    ///   closing quote and the next comma or line end, or a quote inside an unquoted field.
    package static func records(_ text: String) throws(Malformed) -> [Record] {
        var scalars = text.unicodeScalars[...]
        if scalars.first == "\u{FEFF}" { scalars = scalars.dropFirst() }
        var records: [Record] = []
        var fields: [String] = []
        var field = String.UnicodeScalarView()
        var line = 1
        var recordLine = 1
        // Whether the record has anything yet: a separator or a quoted field, even an empty one.
        var started = false
        var position = scalars.startIndex

        func endRecord() {
            if started || !field.isEmpty {
                fields.append(String(field))
                records.append(Record(fields: fields, line: recordLine))
            }
            fields = []
            field = String.UnicodeScalarView()
            started = false
        }

        while position < scalars.endIndex {
            let scalar = scalars[position]
            position = scalars.index(after: position)
            switch scalar {
            case ",":
                fields.append(String(field))
                field = String.UnicodeScalarView()
                started = true
            case "\r", "\n":
                if scalar == "\r", position < scalars.endIndex, scalars[position] == "\n" {
                    position = scalars.index(after: position)
                }
                endRecord()
                line += 1
                recordLine = line
            case "\"" where field.isEmpty:
                // A quoted field: up to the quote that is not doubled.
                let opened = line
                started = true
                while true {
                    guard position < scalars.endIndex else {
                        throw Malformed(line: opened, reason: "a quoted field has no closing quote")
                    }
                    let inner = scalars[position]
                    position = scalars.index(after: position)
                    if inner == "\"" {
                        if position < scalars.endIndex, scalars[position] == "\"" {
                            field.append("\"")
                            position = scalars.index(after: position)
                            continue
                        }
                        break
                    }
                    if inner == "\n" || (inner == "\r" && (position == scalars.endIndex || scalars[position] != "\n")) { line += 1 }
                    field.append(inner)
                }
                if position < scalars.endIndex, !",\r\n".unicodeScalars.contains(scalars[position]) {
                    throw Malformed(line: line, reason: "text follows a closing quote before the next comma or line end")
                }
            case "\"":
                throw Malformed(line: line, reason: "a double quote inside a field that does not start with one")
            default:
                field.append(scalar)
            }
        }
        endRecord()
        return records
    }
}
