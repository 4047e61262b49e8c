package import CredentialStore
import Foundation

/// Reading another store's file into rows: each a credential for a space, or a reason to skip it.
package enum ForeignImport {
    /// One credential the file holds (a Bitwarden login with several URIs gives one per URI).
    package struct Row: Equatable, Sendable {
        /// The line of the file it starts on, from 1.
        package var line: Int
        /// The entry's name in the manager (Title, name), for the report; nil in a git-credentials file.
        package var name: String?
        /// Where it goes; nil when the row has no usable URL.
        package var space: ProtectionSpace?
        package var user: String
        package var password: String
        /// Why it is not imported; nil for a row to import.
        package var skipped: String?
        /// What the import read differently from the row's fields, said in the report when the
        /// row is imported (a user name taken from its URL).
        package var note: String?
    }

    /// The columns each CSV format must have, by the names its manager writes, and which holds what.
    struct Columns {
        var url: String
        var user: String
        var password: String
        var name: String
        /// Bitwarden's item type column (`login`, `note`, `card`, `identity`, `sshkey`).
        var type: String?
    }

    static func columns(_ format: ImportFormat) -> Columns? {
        switch format {
        case .gitCredentials: nil
        case .keepassxc: Columns(url: "URL", user: "Username", password: "Password", name: "Title")
        case .bitwarden: Columns(url: "login_uri", user: "login_username", password: "login_password", name: "name", type: "type")
        case .chrome: Columns(url: "url", user: "username", password: "password", name: "name")
        }
    }

    /// The most entries a file may hold (a Bitwarden login counts once per URI): more than any
    /// password manager's export, and the bound on what an import holds in memory for its report.
    package static let maximumEntries = 100_000
    /// The most URIs a Bitwarden login may hold; one with more is skipped, and said.
    package static let maximumURIsPerLogin = 100
    /// The longest git-credentials line, in UTF-8 bytes: a password at its limit, percent-encoded.
    package static let maximumLineBytes = 4 << 20

    /// The rows of `text`, a file in `format`.
    ///
    /// - Throws: what ``Reader/next()`` throws.
    package static func rows(_ text: String, format: ImportFormat) throws -> [Row] {
        var reader = Reader(StringScalars(text), format: format)
        var rows: [Row] = []
        while let row = try reader.next() { rows.append(row) }
        return rows
    }

    /// Reads a file's rows one at a time, holding only the record it reads.
    package struct Reader<Source: ScalarSource> {
        private let format: ImportFormat
        private var csv: CSV.Reader<Source>?
        private var source: Source?
        /// The column of each thing a row takes, once the header is read.
        private var header: (count: Int, url: Int, user: Int, password: Int, name: Int, type: Int?)?
        /// The rows of a Bitwarden login with several URIs not returned yet.
        private var pending: [Row] = []
        private var entries = 0
        private var lineNumber = 0

        package init(_ source: Source, format: ImportFormat) {
            self.format = format
            if columns(format) == nil {
                self.source = source
            } else {
                csv = CSV.Reader(source)
            }
        }

        /// The next row; nil at the end of the file.
        ///
        /// - Throws: a ``FormatError`` (a data error, 65) naming the line for a file that is not
        ///   in the format: CSV that does not parse, a header without the format's columns, a
        ///   record with another number of fields than the header, a git-credentials line that is
        ///   not a URL; a field, record or line over its cap; more than ``maximumEntries``
        ///   entries; bytes that are not UTF-8.
        package mutating func next() throws -> Row? {
            if pending.isEmpty {
                pending = try csv == nil ? nextGitCredentialRows() : nextCSVRows()
                pending.reverse()
            }
            guard let row = pending.popLast() else { return nil }
            entries += 1
            guard entries <= ForeignImport.maximumEntries else {
                throw FormatError("line \(row.line): the file holds more than \(ForeignImport.maximumEntries) entries, more than an import takes at once; split it, and nothing was imported")
            }
            return row
        }

        private mutating func nextRecord() throws -> CSV.Record? {
            do {
                return try csv?.next()
            } catch let error as CSV.Malformed {
                throw FormatError("line \(error.line): \(error.reason); the file is not CSV as \(format.title) writes it, and nothing was imported")
            }
        }

        /// The rows of the next record that has any; empty at the end of the file.
        private mutating func nextCSVRows() throws -> [Row] {
            if header == nil {
                guard let first = try nextRecord(), let columns = columns(format) else {
                    throw FormatError("the file is empty; a \(format.title) starts with its header line, and nothing was imported")
                }
                let names = first.fields.map { $0.trimmingCharacters(in: .whitespaces) }
                func index(_ column: String) throws -> Int {
                    guard let found = names.firstIndex(of: column) else {
                        throw FormatError("the header has no \(String(reflecting: column)) column, so this is not a \(format.title) (see `credstore help import`); nothing was imported")
                    }
                    // Two columns of one name: which holds the password is a guess not taken.
                    guard names.lastIndex(of: column) == found else {
                        throw FormatError("the header names the \(String(reflecting: column)) column twice; nothing was imported")
                    }
                    return found
                }
                header = (first.fields.count, try index(columns.url), try index(columns.user), try index(columns.password),
                          try index(columns.name), try columns.type.map(index))
            }
            guard let header, let record = try nextRecord() else { return [] }
            guard record.fields.count == header.count else {
                throw FormatError("line \(record.line) has \(record.fields.count) fields where the header has \(header.count); the file is malformed and nothing was imported")
            }
            let fields = record.fields
            var row = Row(line: record.line, name: fields[header.name], space: nil, user: fields[header.user], password: fields[header.password])
            if let type = header.type, fields[type] != "login" {
                let named = fields[type].isEmpty ? "untyped" : ForeignImport.word(fields[type])
                row.skipped = named.map { "a Bitwarden \($0) item, not a login" } ?? "a Bitwarden item that is not a login"
                return [row]
            }
            // Bitwarden joins a login's URIs with commas in the one field: split at each comma
            // scalar, as the export wrote it. A comma followed by a combining mark is one
            // Character, which equals no comma: read by Characters, `https://a.example,\u{301}@b.example`
            // was one URL of b.example.
            let field = fields[header.url].unicodeScalars
            let urls = (format == .bitwarden ? field.split(separator: ",") : [field[...]])
                .map { String(Substring($0)).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            if urls.isEmpty {
                row.skipped = "it has no URL"
                return [row]
            }
            if urls.count > ForeignImport.maximumURIsPerLogin {
                row.skipped = "it has \(urls.count) URIs, more than the \(ForeignImport.maximumURIsPerLogin) a login is imported with; trim them in the manager and export again"
                return [row]
            }
            return urls.map { text in
                var entry = row
                switch webSpace(text) {
                case .success(let found):
                    entry.space = found.space
                    // A user name in the URL (never a password: that is refused) fills an empty
                    // user column; it is said either way, never dropped unseen.
                    if let user = found.user {
                        if entry.user.isEmpty {
                            entry.user = user
                            entry.note = "the user name came from the URL"
                        } else if user != entry.user {
                            entry.note = "the URL names another user, which was left out; the user column was imported"
                        }
                    }
                case .failure(let reason): entry.skipped = reason.text
                }
                return entry
            }
        }

        /// The row of the next line that is not blank; empty at the end of the file.
        private mutating func nextGitCredentialRows() throws -> [Row] {
            // Taken out while it is read, so that its buffer has one owner and is not copied.
            guard var source = self.source else { return [] }
            self.source = nil
            defer { self.source = source }
            while true {
                var line = String.UnicodeScalarView()
                var bytes = 0
                var ended = false
                while let scalar = try source.nextScalar() {
                    if scalar == "\n" {
                        ended = true
                        break
                    }
                    bytes += UTF8.width(scalar)
                    guard bytes <= ForeignImport.maximumLineBytes else {
                        throw FormatError("line \(lineNumber + 1) is longer than \(ForeignImport.maximumLineBytes) bytes; the git-credentials file is malformed and nothing was imported")
                    }
                    line.append(scalar)
                }
                guard ended || !line.isEmpty else { return [] }
                lineNumber += 1
                if line.last == "\r" { line.removeLast() }
                let text = String(line)
                guard !text.allSatisfy(\.isWhitespace) else { continue }
                return [try gitCredentialRow(text, number: lineNumber)]
            }
        }
    }

    /// `text` as a reason may repeat it: a short word of the letters a scheme or an item type is
    /// spelled with, or nil. A reason is kept until the report, and the file's text could be
    /// anything (a megabyte, a password): only a word that is plainly a name is said.
    static func word(_ text: some StringProtocol) -> String? {
        guard !text.isEmpty, text.utf8.count <= 32,
              text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-._".contains($0)) }) else { return nil }
        return String(text)
    }

    struct Reason: Error {
        var text: String
    }

    /// The space of a web login's URL: scheme, host and port, no realm (a server's realm is not
    /// in the export; the store's lookups fall back to the origin's credential without one), and
    /// the user name the URL carries before `@`, if any.
    ///
    /// Read by `URLReading`, as every URL credstore takes in: a URL a browser would read as
    /// another host (a backslash, a percent-encoded host …) or one with a password is refused.
    static func webSpace(_ text: String) -> Result<(space: ProtectionSpace, user: String?), Reason> {
        guard let schemeEnd = text.range(of: "://") else {
            return .failure(Reason(text: "its URL has no scheme; write it as https://HOST in the file to import it"))
        }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "https" || scheme == "http" else {
            return .failure(Reason(text: word(scheme).map { "its URL's scheme is \($0); only http and https logins are imported" }
                ?? "its URL is not a URL with a host"))
        }
        let reading: URLReading
        do {
            reading = try URLReading(text, userInfo: .userOnly)
        } catch let error as CredentialStorageError {
            return .failure(Reason(text: error.message == URLReading.notAURL ? "its URL is not a URL with a host" : error.message))
        } catch {
            return .failure(Reason(text: "its URL is not a URL with a host"))
        }
        return .success((ProtectionSpace(host: reading.host, port: reading.spacePort, protocol: reading.scheme, realm: nil), reading.user))
    }

    /// The row of one line of a git-credentials file, read as git-credential-store reads it: a
    /// URL whose user, password, host and path are percent-encoded.
    ///
    /// The space is the one credstore's own git helper stores git's `store` request under
    /// (``GitCredentialRequest/space``): protocol, host and port, and with a path (written when
    /// credential.useHttpPath was set) the realm `git:PATH`.
    static func gitCredentialRow(_ line: String, number: Int) throws -> Row {
        let malformed = FormatError("line \(number) is not a URL such as https://user:password@host; the git-credentials file is malformed and nothing was imported")
        // By Unicode scalars, as git reads bytes: a delimiter followed by a combining mark is one
        // Character that equals no delimiter, and a reading by Characters ends the host elsewhere.
        let scalars = line.unicodeScalars
        guard let schemeEnd = scalars.firstRange(of: "://".unicodeScalars), schemeEnd.lowerBound != scalars.startIndex else { throw malformed }
        let scheme = String(Substring(scalars[..<schemeEnd.lowerBound])).lowercased()
        let rest = scalars[schemeEnd.upperBound...]
        // As git's credential_from_url: the host part ends at the first /, ? or #.
        let hostEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        let authority = rest[..<hostEnd]
        var row = Row(line: number, name: nil, space: nil, user: "", password: "")
        guard let at = authority.firstIndex(of: "@") else {
            row.skipped = "it has no user name or password"
            return row
        }
        let userInfo = authority[..<at]
        let colon = userInfo.firstIndex(of: ":")
        // As git: the leading slashes go before decoding, the trailing ones after it, so an
        // encoded %2F keeps its place at the start and not at the end.
        let path = rest[hostEnd...].drop(while: { $0 == "/" })
        // git writes a host with every byte but letters, digits and - . _ ~ encoded: a port's
        // colon and an IPv6 address's brackets. Any other escape is not git's, and would show
        // one host in the file and name another once decoded.
        let rawHost = authority[authority.index(after: at)...]
        guard Self.hasOnlyGitHostEscapes(Substring(rawHost)) else {
            row.skipped = "its host holds percent-encoded bytes other than the port's colon or an IPv6 address's brackets, which would read as another host"
            return row
        }
        guard let user = percentDecoded(Substring(userInfo[..<(colon ?? userInfo.endIndex)])),
              let password = colon.map({ percentDecoded(Substring(userInfo[userInfo.index(after: $0)...])) }) ?? "",
              let host = percentDecoded(Substring(rawHost)),
              var decodedPath = percentDecoded(Substring(path)) else {
            row.skipped = "a percent-encoded value is not UTF-8 text"
            return row
        }
        while decodedPath.count > 1, decodedPath.hasSuffix("/") { decodedPath.removeLast() }
        (row.user, row.password) = (user, password)
        guard scheme == "https" || scheme == "http" else {
            row.skipped = word(scheme).map { "its protocol is \($0); only http and https credentials are imported" }
                ?? "its protocol is not http or https, the only ones imported"
            return row
        }
        var request = GitCredentialRequest()
        request.protocol = scheme
        request.host = host
        request.path = decodedPath.isEmpty ? nil : decodedPath
        guard let space = request.space else { throw malformed }
        // The host as every URL's host is read: a backslash, a stray @, an old IPv4 spelling …
        // would be another host to a browser or to git's http backend.
        do {
            _ = try URLReading.host(space.host)
        } catch let error as CredentialStorageError {
            row.skipped = error.message
            return row
        }
        row.space = space
        return row
    }

    /// Whether the only `%` escapes in a git-credentials host are those git writes for a
    /// host of its own: `%3A` (a port's colon), `%5B` and `%5D` (an IPv6 address's brackets).
    static func hasOnlyGitHostEscapes(_ host: Substring) -> Bool {
        let bytes = Array(host.utf8)
        var index = 0
        while let percent = bytes[index...].firstIndex(of: UInt8(ascii: "%")) {
            let escape = String(decoding: bytes[percent..<min(percent + 3, bytes.count)], as: UTF8.self).uppercased()
            guard escape == "%3A" || escape == "%5B" || escape == "%5D" else { return false }
            index = percent + 3
        }
        return true
    }

    /// `%XX` sequences decoded as git's url_decode does (a `%` not followed by two hex digits
    /// stays as it is, `+` is not a space); nil when the bytes are not UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        let utf8 = Array(text.utf8)
        var index = 0
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "%"), index + 2 < utf8.count, let high = hex(utf8[index + 1]), let low = hex(utf8[index + 2]) {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
