import ArgumentParser
package import CredentialStore
import Foundation

/// The files of other stores `credstore import --from` reads.
package enum ImportFormat: String, CaseIterable, ExpressibleByArgument, Sendable {
    /// git-credential-store's `~/.git-credentials`: one `scheme://user:password@host[:port][/path]` a line.
    case gitCredentials = "git-credentials"
    /// KeePassXC's CSV export: `"Group","Title","Username","Password","URL","Notes"…`.
    case keepassxc
    /// Bitwarden's CSV export: `folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp`.
    case bitwarden
    /// Chrome's and Chromium's CSV export: `name,url,username,password[,note]`.
    case chrome

    /// The name a person knows the file by.
    var title: String {
        switch self {
        case .gitCredentials: "git-credentials file"
        case .keepassxc: "KeePassXC export"
        case .bitwarden: "Bitwarden export"
        case .chrome: "Chrome export"
        }
    }
}

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

    /// The rows of `text`, a file in `format`.
    ///
    /// - Throws: a data error (65) naming the line for a file that is not in the format: CSV
    ///   that does not parse, a header without the format's columns, a record with another
    ///   number of fields than the header, a git-credentials line that is not a URL.
    package static func rows(_ text: String, format: ImportFormat) throws -> [Row] {
        guard let columns = columns(format) else { return try gitCredentialRows(text) }
        let records: [CSV.Record]
        do {
            records = try CSV.records(text)
        } catch {
            throw CommandFailure(.dataError, "line \(error.line): \(error.reason); the file is not valid CSV and nothing was imported")
        }
        guard let header = records.first else {
            throw CommandFailure(.dataError, "the file is empty; a \(format.title) starts with its header line, and nothing was imported")
        }
        let names = header.fields.map { $0.trimmingCharacters(in: .whitespaces) }
        func index(_ column: String) throws -> Int {
            guard let found = names.firstIndex(of: column) else {
                throw CommandFailure(.dataError, "the header has no \(String(reflecting: column)) column, so this is not a \(format.title) (see `credstore help import`); nothing was imported")
            }
            return found
        }
        let url = try index(columns.url), user = try index(columns.user), password = try index(columns.password)
        let name = try index(columns.name)
        let type = try columns.type.map(index)
        var rows: [Row] = []
        for record in records.dropFirst() {
            guard record.fields.count == header.fields.count else {
                throw CommandFailure(.dataError, "line \(record.line) has \(record.fields.count) fields where the header has \(header.fields.count); the file is malformed and nothing was imported")
            }
            let fields = record.fields
            var row = Row(line: record.line, name: fields[name], space: nil, user: fields[user], password: fields[password])
            if let type, fields[type] != "login" {
                row.skipped = "a Bitwarden \(fields[type].isEmpty ? "untyped" : fields[type]) item, not a login"
                rows.append(row)
                continue
            }
            // Bitwarden joins a login's URIs with commas in the one field.
            let urls = format == .bitwarden ? fields[url].split(separator: ",").map(String.init) : [fields[url]]
            if urls.allSatisfy({ $0.trimmingCharacters(in: .whitespaces).isEmpty }) {
                row.skipped = "it has no URL"
                rows.append(row)
                continue
            }
            for text in urls where !text.trimmingCharacters(in: .whitespaces).isEmpty {
                var entry = row
                switch webSpace(text.trimmingCharacters(in: .whitespaces)) {
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
                rows.append(entry)
            }
        }
        return rows
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
            // Only a scheme-like word is repeated: the text before :// could be anything.
            let named = !scheme.isEmpty && scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
            return .failure(Reason(text: named ? "its URL's scheme is \(scheme); only http and https logins are imported" : "its URL is not a URL with a host"))
        }
        let reading: URLReading
        do {
            reading = try URLReading(text, userInfo: .userOnly)
        } catch let error as CredentialStorageError {
            return .failure(Reason(text: error.message == URLReading.notAURL ? "its URL is not a URL with a host" : error.message))
        } catch {
            return .failure(Reason(text: "its URL is not a URL with a host"))
        }
        return .success((ProtectionSpace(host: reading.host, port: reading.port ?? 0, protocol: reading.scheme, realm: nil), reading.user))
    }

    /// The rows of a git-credentials file, read as git-credential-store reads it: each line a URL
    /// whose user, password, host and path are percent-encoded.
    ///
    /// The space is the one credstore's own git helper stores git's `store` request under
    /// (``GitCredentialRequest/space``): protocol, host and port, and with a path (written when
    /// credential.useHttpPath was set) the realm `git:PATH`.
    static func gitCredentialRows(_ text: String) throws -> [Row] {
        var rows: [Row] = []
        // Scalars, not Characters: a CRLF line must still end at its LF.
        for (offset, scalars) in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = String(String.UnicodeScalarView(scalars))
            if line.unicodeScalars.last == "\r" { line.unicodeScalars.removeLast() }
            guard !line.allSatisfy(\.isWhitespace) else { continue }
            let number = offset + 1
            let malformed = CommandFailure(.dataError, "line \(number) is not a URL such as https://user:password@host; the git-credentials file is malformed and nothing was imported")
            guard let schemeEnd = line.range(of: "://"), !line[..<schemeEnd.lowerBound].isEmpty else { throw malformed }
            let scheme = String(line[..<schemeEnd.lowerBound]).lowercased()
            let rest = line[schemeEnd.upperBound...]
            // As git's credential_from_url: the host part ends at the first /, ? or #.
            let hostEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
            let authority = rest[..<hostEnd]
            var row = Row(line: number, name: nil, space: nil, user: "", password: "")
            guard let at = authority.firstIndex(of: "@") else {
                row.skipped = "it has no user name or password"
                rows.append(row)
                continue
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
            guard Self.hasOnlyGitHostEscapes(rawHost) else {
                row.skipped = "its host holds percent-encoded bytes other than the port's colon or an IPv6 address's brackets, which would read as another host"
                rows.append(row)
                continue
            }
            guard let user = percentDecoded(userInfo[..<(colon ?? userInfo.endIndex)]),
                  let password = colon.map({ percentDecoded(userInfo[userInfo.index(after: $0)...]) }) ?? "",
                  let host = percentDecoded(authority[authority.index(after: at)...]),
                  var decodedPath = percentDecoded(path) else {
                row.skipped = "a percent-encoded value is not UTF-8 text"
                rows.append(row)
                continue
            }
            while decodedPath.count > 1, decodedPath.hasSuffix("/") { decodedPath.removeLast() }
            (row.user, row.password) = (user, password)
            guard scheme == "https" || scheme == "http" else {
                row.skipped = "its protocol is \(scheme); only http and https credentials are imported"
                rows.append(row)
                continue
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
                rows.append(row)
                continue
            }
            row.space = space
            rows.append(row)
        }
        return rows
    }

    /// Whether the only `%` escapes in a git-credentials host are those git writes for a
    /// host of its own: `%3A` (a port's colon), `%5B` and `%5D` (an IPv6 address's brackets).
    static func hasOnlyGitHostEscapes(_ host: Substring) -> Bool {
        var rest = host[...]
        while let percent = rest.firstIndex(of: "%") {
            let escape = rest[percent...].prefix(3).uppercased()
            guard escape == "%3A" || escape == "%5B" || escape == "%5D" else { return false }
            rest = rest[rest.index(percent, offsetBy: 3)...]
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

extension ForeignImport {
    /// What the import does with a row.
    package enum Action: String, Sendable {
        case add, update, unchanged, skip
    }

    /// A row with what became of it.
    package struct Outcome: Sendable {
        package var row: Row
        package var action: Action
        /// Why it was skipped or left unchanged; for one added or updated, the row's note or nil.
        package var reason: String?
    }

    /// Decides, writes (in one transaction, unless `dryRun`) and returns what became of each row.
    ///
    /// - Parameter storage: the store, or nil in a dry run on a store that does not exist yet
    ///   (every credential would be added, and no store is created to find that out).
    package static func apply(
        _ rows: [Row], to storage: CredentialStorage?, persistence: Persistence?, overwrite: Bool, dryRun: Bool
    ) throws -> [Outcome] {
        struct Key: Hashable {
            var space: ProtectionSpace
            var user: String
        }
        var outcomes: [Outcome] = []
        var first: [Key: Row] = [:]
        var items: [(space: ProtectionSpace, credential: Credential)] = []
        var itemOutcome: [Int] = []
        for row in rows {
            var outcome = Outcome(row: row, action: .skip, reason: row.skipped)
            defer { outcomes.append(outcome) }
            guard outcome.reason == nil, let space = row.space else { continue }
            var credential = Credential(user: row.user, password: row.password)
            if let persistence { credential.persistence = persistence }
            if row.user.isEmpty {
                outcome.reason = "it has no user name"
            } else if row.password.isEmpty {
                outcome.reason = "its password is empty"
            } else if let earlier = first[Key(space: space, user: row.user)] {
                outcome.reason = earlier.password == row.password
                    ? "the same site and user as line \(earlier.line)"
                    : "the same site and user as line \(earlier.line), with another password: the first is imported; add this one with `credstore add` if it is the right one"
            } else {
                do {
                    // The rules `set` applies, checked here so that a refused row is named and skipped.
                    try credential.validate(in: space)
                    first[Key(space: space, user: row.user)] = row
                    items.append((space, credential))
                    itemOutcome.append(outcomes.count)
                } catch let error as CredentialStorageError {
                    outcome.reason = error.message
                }
            }
        }
        let results = try storage?.setAll(items, replacingDifferent: overwrite, dryRun: dryRun)
            ?? Array(repeating: BatchWriteOutcome.added, count: items.count)
        for (index, result) in zip(itemOutcome, results) {
            switch result {
            case .added:
                outcomes[index].action = .add
                outcomes[index].reason = outcomes[index].row.note
            case .updated:
                outcomes[index].action = .update
                outcomes[index].reason = outcomes[index].row.note
            case .unchanged:
                outcomes[index].action = .unchanged
                outcomes[index].reason = "the store already holds this password"
            case .keptDifferent:
                outcomes[index].reason = "the store holds another password for this user at this site; --overwrite replaces it"
            }
        }
        return outcomes
    }

    /// Runs `credstore import FILE --from FORMAT`.
    static func run(file: String, format: ImportFormat, persistence: Persistence?, overwrite: Bool, dryRun: Bool,
                    global: GlobalOptions, console: Console) throws {
        let text: String
        do {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            guard let decoded = String(validating: bytes, as: UTF8.self) else {
                throw CommandFailure(.dataError, "\(file) is not UTF-8 text; export it again as UTF-8 (every manager's export is); nothing was imported")
            }
            text = decoded
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure(.ioError, "could not read \(file); check its path and permissions")
        }
        // The whole file is read and checked before the store is opened: a malformed one changes
        // nothing, not even by creating a store.
        let rows = try rows(text, format: format)
        let location = global.location(in: console)
        let storage = dryRun ? try location.openIfPresent(console) : try location.openOrCreate(console)
        let outcomes: [Outcome]
        do {
            outcomes = try apply(rows, to: storage, persistence: persistence, overwrite: overwrite, dryRun: dryRun)
        } catch CredentialStorageError.Code.synchronizableRemovalNeedsOption {
            throw CommandFailure(.usage, "\(file) replaces a synchronizable credential, which --persistence \(persistence?.rawValue ?? "") would remove on every synced machine; leave out --persistence to keep each replaced credential's tier (nothing was imported)")
        }
        let count = { (action: Action) in outcomes.filter { $0.action == action }.count }
        let advice = dryRun ? nil : deletionAdvice(file: file, format: format)
        if global.json {
            console.output.write(JSONValue.object([
                ("format", .string(format.rawValue)), ("dryRun", .bool(dryRun)),
                ("added", .number(count(.add))), ("updated", .number(count(.update))),
                ("unchanged", .number(count(.unchanged))), ("skipped", .number(count(.skip))),
                ("entries", .array(outcomes.map { outcome in
                    .object([
                        ("line", .number(outcome.row.line)), ("action", .string(outcome.action.rawValue)),
                        ("name", .string(outcome.row.name)), ("user", .string(outcome.row.user.isEmpty ? nil : outcome.row.user)),
                        ("space", outcome.row.space.map(Describe.spaceJSON) ?? .null), ("reason", .string(outcome.reason)),
                    ])
                })),
                ("advice", .string(advice)),
            ]).rendered + "\n")
            return
        }
        var table = Table(header: ["LINE", "RESULT", "SPACE", "USER", "WHY"])
        for outcome in outcomes {
            let result = switch outcome.action {
            case .add: dryRun ? "would add" : "added"
            case .update: dryRun ? "would update" : "updated"
            case .unchanged: "unchanged"
            case .skip: "skipped"
            }
            table.rows.append([String(outcome.row.line), result, outcome.row.space.map(Describe.space) ?? "",
                               outcome.row.user, outcome.reason ?? ""])
        }
        var report = outcomes.isEmpty ? "" : table.rendered
        // The file name is the user's, but shown on a terminal all the same: escaped like a cell.
        report += Describe.cell("\(dryRun ? "Would import" : "Imported") from \(format.title) \(file): \(count(.add)) added, "
            + "\(count(.update)) updated, \(count(.unchanged)) unchanged, \(count(.skip)) skipped"
            + (dryRun ? " (dry run: nothing was written)" : "")) + "\n"
        if let advice { report += Describe.cell(advice) + "\n" }
        console.output.write(report)
    }

    /// What to do with the plain-text file once its passwords are in the store.
    static func deletionAdvice(file: String, format: ImportFormat) -> String {
        // Quoted for the shell, so the advice can be pasted as it is.
        let quoted = "'" + file.replacingOccurrences(of: "'", with: "'\\''") + "'"
        var advice = "\(file) still holds your passwords in plain text: once the import looks right, delete it "
            + "with `shred -u \(quoted)` (on an SSD or a copy-on-write file system no tool reaches every old copy, "
            + "so keep such a disk encrypted)"
        if format == .gitCredentials {
            advice += ", and stop git writing it again: `git config --global --unset credential.helper store`, "
                + "then set credstore's helper (`credstore help git-credential`)"
        } else {
            advice += "; empty the trash too if the export passed through it"
        }
        return advice
    }
}
