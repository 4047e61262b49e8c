/// A strict reader of RFC 4180 CSV, for the password managers' exports `credstore import --from`
/// reads.
///
/// Written here rather than taken from a CSV package: the exports carry every password a user
/// has, and a malformed file must be refused whole (nothing imported), not read leniently. The
/// packages at hand accept what this refuses: SwiftCSV 0.10.0 ends an unterminated quoted field
/// silently at the end of the file and drops an empty last field of a file without a final
/// newline (an empty password or note), and either package would be a dependency of the shipped
/// binary for some 100 lines of parsing. It reads a ``ScalarSource`` one record at a time, so
/// that a file of any size is read in the memory of its longest record, which is capped.
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

    /// The longest field read, in UTF-8 bytes: a password's limit (1,000,000 bytes) with room
    /// for the notes a manager exports beside it.
    package static let maximumFieldBytes = 1 << 20
    /// The longest record read, all its fields together.
    package static let maximumRecordBytes = 4 << 20
    /// The most fields a record has (the managers' exports have 4 to 12).
    package static let maximumFieldCount = 1_000

    /// Reads every record of `text`.
    ///
    /// - Throws: ``Malformed``, as ``Reader/next()`` does.
    package static func records(_ text: String) throws(Malformed) -> [Record] {
        var reader = Reader(StringScalars(text))
        var records: [Record] = []
        do {
            while let record = try reader.next() { records.append(record) }
        } catch let error as Malformed {
            throw error
        } catch {
            // A string's scalars are always readable.
            preconditionFailure("\(error)")
        }
        return records
    }

    /// Reads records one at a time, holding only the one it reads.
    ///
    /// Fields are separated by commas and records by CRLF, LF or a lone CR. A field that starts
    /// with a double quote runs to the next lone double quote, and holds commas, line breaks and
    /// doubled quotes (`""` for `"`). A byte-order mark at the start is dropped; a final line end
    /// makes no empty record, and neither does an empty line.
    package struct Reader<Source: ScalarSource> {
        private var source: Source
        /// A scalar read ahead (after a CR, or a closing quote) and not used yet.
        private var pending: Unicode.Scalar?
        private var line = 1
        private var started = false

        package init(_ source: Source) {
            self.source = source
        }

        private mutating func read() throws -> Unicode.Scalar? {
            if let scalar = pending {
                pending = nil
                return scalar
            }
            return try source.nextScalar()
        }

        /// The next record; nil at the end of the input.
        ///
        /// - Throws: ``Malformed`` for a quoted field without its closing quote, text between a
        ///   closing quote and the next comma or line end, a quote inside an unquoted field, or
        ///   a field or record over its cap (``maximumFieldBytes``, ``maximumRecordBytes``,
        ///   ``maximumFieldCount``); what the source throws when the input is not UTF-8 or
        ///   cannot be read.
        package mutating func next() throws -> Record? {
            if !started {
                started = true
                if let first = try source.nextScalar(), first != "\u{FEFF}" { pending = first }
            }
            var fields: [String] = []
            // UTF-8 bytes, not a scalar view: most of a file is ASCII, appended a byte at a time.
            var field: [UInt8] = []
            var fieldBytes = 0
            var recordBytes = 0
            // Whether the record has anything yet: a separator or a quoted field, even an empty one.
            var begun = false
            var recordLine = line

            func append(_ scalar: Unicode.Scalar, at line: Int) throws(Malformed) {
                let count = UTF8.width(scalar)
                fieldBytes += count
                recordBytes += count
                guard fieldBytes <= CSV.maximumFieldBytes else {
                    throw Malformed(line: line, reason: "a field is longer than \(CSV.maximumFieldBytes) bytes")
                }
                guard recordBytes <= CSV.maximumRecordBytes else {
                    throw Malformed(line: recordLine, reason: "the record is longer than \(CSV.maximumRecordBytes) bytes")
                }
                if scalar.isASCII {
                    field.append(UInt8(truncatingIfNeeded: scalar.value))
                } else {
                    field.append(contentsOf: scalar.utf8)
                }
            }
            func endField() throws(Malformed) {
                guard fields.count < CSV.maximumFieldCount else {
                    throw Malformed(line: recordLine, reason: "the record has more than \(CSV.maximumFieldCount) fields")
                }
                fields.append(String(decoding: field, as: UTF8.self))
                field.removeAll(keepingCapacity: true)
                fieldBytes = 0
            }

            while let scalar = try read() {
                switch scalar {
                case ",":
                    try endField()
                    begun = true
                case "\r", "\n":
                    if scalar == "\r", let after = try read(), after != "\n" { pending = after }
                    line += 1
                    if begun || !field.isEmpty {
                        try endField()
                        return Record(fields: fields, line: recordLine)
                    }
                    // An empty line makes no record; the next one starts on the next line.
                    recordLine = line
                case "\"" where field.isEmpty:
                    // A quoted field: up to the quote that is not doubled.
                    let opened = line
                    begun = true
                    while true {
                        guard let inner = try read() else {
                            throw Malformed(line: opened, reason: "a quoted field has no closing quote")
                        }
                        if inner == "\"" {
                            guard let after = try read() else { break }
                            if after == "\"" {
                                try append("\"", at: opened)
                                continue
                            }
                            guard after == "," || after == "\r" || after == "\n" else {
                                throw Malformed(line: line, reason: "text follows a closing quote before the next comma or line end")
                            }
                            pending = after
                            break
                        }
                        if inner == "\n" { line += 1 }
                        if inner == "\r" {
                            // A lone CR ends a line; CRLF is one line end, counted at its LF.
                            let after = try read()
                            if after != "\n" { line += 1 }
                            pending = after
                        }
                        try append(inner, at: opened)
                    }
                case "\"":
                    throw Malformed(line: line, reason: "a double quote inside a field that does not start with one")
                default:
                    try append(scalar, at: line)
                }
            }
            guard begun || !field.isEmpty else { return nil }
            try endField()
            return Record(fields: fields, line: recordLine)
        }
    }
}
