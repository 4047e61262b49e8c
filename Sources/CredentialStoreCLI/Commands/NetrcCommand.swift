import ArgumentParser
import CredentialStore
import Foundation
#if canImport(Glibc)
// `struct stat` is CoreFoundation's declaration once swift-nio's modules are in the build: the
// member-import check wants the module that declares it.
import CoreFoundation
import Glibc
#endif

/// `credstore netrc import|export FILE`: trades credentials with curl and the other tools that
/// read a netrc file.
struct NetrcCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "netrc",
        _superCommandName: CredstoreCommand.name,
        abstract: "Import a netrc file, or export the store's web credentials as one.",
        subcommands: [Import.self, Export.self])

    /// `credstore netrc import FILE`: stores each `machine` entry as an https credential.
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Store each machine's login and password as a permanent https credential.",
            discussion: """
                Each `machine HOST login USER password PASS` becomes a credential for \
                https://HOST (no realm); the first entry of a host becomes its default, as curl \
                uses the first. `default` entries and `macdef` macros are skipped, and each \
                skipped entry is named on stderr with the reason. A missing or unreadable file \
                exits 74; a malformed one exits 65 and stores nothing; an entry the store \
                refuses (a host that is not a host name, a value with a line break or NUL) is \
                skipped, the others are imported, and the exit status is 65.
                """)

        @Argument(help: ArgumentHelp("The netrc file to read.", valueName: "file"), completion: .file())
        var file: String

        @OptionGroup var global: GlobalOptions

        func run() throws {
            let console = Console.current
            let text: String
            do {
                // Bytes first, then strict UTF-8: the parser works on Unicode scalars, never on
                // Characters ("\r\n" is one Character, which would hide every line ending).
                let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
                guard let decoded = String(validating: bytes, as: UTF8.self) else { throw CocoaError(.fileReadInapplicableStringEncoding) }
                text = decoded
            } catch {
                throw CommandFailure(.ioError, "could not read \(file) as a UTF-8 text file; check its path and permissions")
            }
            // Parse and check all before storing any, so a malformed file changes nothing.
            let netrc = try Netrc.parse(text)
            var skipped = netrc.skipped
            var accepted: [(space: ProtectionSpace, credential: Credential)] = []
            for (machine, line) in zip(netrc.machines, netrc.lines) {
                let space = ProtectionSpace(host: machine.host, port: 0, protocol: "https", realm: nil)
                // No tier named: a credential already stored keeps its own (a synchronizable one stays shared).
                let credential = Credential(user: machine.login, password: machine.password)
                do {
                    // The host as every URL's host is read: one a browser or curl would take for
                    // another host (a backslash, percent escapes, 0x7f.1) is refused.
                    _ = try URLReading.host(machine.host)
                    // The rules `set` applies, checked here so that a refused entry is named and skipped.
                    try credential.validate(in: space)
                    accepted.append((space, credential))
                } catch let error as CredentialStorageError {
                    skipped.append(Netrc.Skipped(line: line, machine: machine.host, reason: error.message, refused: true))
                }
            }
            // Each skipped entry on its own line, naming where it is and why; never a value but the host.
            for entry in skipped.sorted(by: { $0.line < $1.line }) {
                console.errors.write(Describe.cell("credstore: \(file) line \(entry.line): skipped \(entry.machine.map { "machine \(String(reflecting: $0))" } ?? "an entry"): \(entry.reason)") + "\n")
            }
            let storage = try global.location(in: console).openOrCreate(console)
            var seen = Set<ProtectionSpace>()
            for (space, credential) in accepted {
                if seen.insert(space).inserted {
                    try storage.setDefaultCredential(credential, for: space)
                } else {
                    try storage.set(credential, for: space)
                }
            }
            if global.json {
                console.output.write(JSONValue.object([
                    ("imported", .number(accepted.count)), ("skipped", .number(skipped.count)),
                    ("skippedEntries", .array(skipped.map { entry in
                        .object([("line", .number(entry.line)), ("machine", .string(entry.machine)), ("reason", .string(entry.reason))])
                    })),
                ]).rendered + "\n")
            } else {
                console.output.write("Imported \(accepted.count) credential\(accepted.count == 1 ? "" : "s") from \(file)"
                    + (skipped.isEmpty ? "" : " (skipped \(skipped.count); see above)") + "\n")
            }
            let refused = skipped.filter(\.refused).count
            if refused > 0 {
                throw CommandFailure(.dataError, "\(file): \(refused) entr\(refused == 1 ? "y was" : "ies were") refused as invalid (see above); the other entries were imported")
            }
        }
    }

    /// `credstore netrc export FILE`: writes one `machine` line per host.
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Write the default http and https credentials as a netrc file (0600).",
            discussion: """
                One `machine HOST login USER password PASS` line per host, from the default \
                credential of its permanent or synchronizable http/https spaces (https, no realm \
                and the default port first). The file is written 0600 and replaced atomically; a \
                symbolic link is refused. Values with spaces or quotes are quoted as curl reads \
                them (curl 7.84 or later).
                """)

        @Argument(help: ArgumentHelp("The netrc file to write (0600, replaced atomically).", valueName: "file"), completion: .file())
        var file: String

        @OptionGroup var global: GlobalOptions

        func run() throws {
            let console = Console.current
            // It only reads the store: a mistyped --store must neither create one nor replace FILE
            // with an empty netrc.
            let location = global.location(in: console)
            let storage = try location.openExisting(console, orFail: CommandFailure(.notFound,
                "there is no store at \(location.path); check --store. \(file) was left as it was"))
            // curl sends a netrc password as Basic: only spaces whose credentials may go out as
            // Basic (any method, or Basic's), never one stored for Digest, NTLM or a form.
            let sendable = AuthenticationMethod.sentAsBasic
            let spaces = try storage.entries().filter {
                $0.isDefault && $0.space.proxyType == nil && ($0.space.protocol == "https" || $0.space.protocol == "http")
                    && sendable.contains($0.space.authenticationMethod)
                    && ($0.persistence == .permanent || $0.persistence == .synchronizable)
            }.map(\.space)
            var machines: [Netrc.Machine] = []
            var refused = 0
            // Said once the file is written: a refused target is then the only line.
            var choices: [String] = []
            for (host, group) in Dictionary(grouping: spaces, by: \.host).sorted(by: { $0.key < $1.key }) {
                var chosen: (space: ProtectionSpace, credential: Credential)?
                var others: [(space: ProtectionSpace, credential: Credential)] = []
                for space in group.sorted(by: Self.preferred) {
                    guard let credential = try storage.defaultCredential(for: space) else { continue }
                    guard chosen == nil else {
                        others.append((space, credential))
                        continue
                    }
                    // Checked again on the way out: a value with a line break or NUL (which only
                    // an older store can hold) would become other lines to the tools reading the file.
                    // A host an older version let in that a URL would read as another host
                    // (0x7f.1, a percent escape) is not written where curl would take it so.
                    guard (try? URLReading.host(space.host)) != nil else {
                        console.errors.write("credstore: skipped \(Describe.space(space)): its host is not one a URL reads as the same host\n")
                        refused += 1
                        break
                    }
                    guard FieldRules.isLineSafe(credential.user), FieldRules.isLineSafe(credential.password) else {
                        console.errors.write("credstore: skipped \(Describe.space(space)): its user name or password holds a line break or NUL\n")
                        refused += 1
                        break
                    }
                    chosen = (space, credential)
                    machines.append(Netrc.Machine(host: space.host, login: credential.user, password: credential.password))
                }
                // netrc has one login per host where the store has one per space: `get` refuses to
                // guess between realms, so the choice made here is said, never silent.
                let leftOut = others.filter { $0.credential.user != chosen?.credential.user || $0.credential.password != chosen?.credential.password }
                if let chosen, !leftOut.isEmpty {
                    func named(_ entry: (space: ProtectionSpace, credential: Credential)) -> String {
                        "\(Describe.cell(entry.credential.user)) (\(Describe.space(entry.space)))"
                    }
                    choices.append("credstore: \(Describe.cell(host)) has defaults in several spaces and a netrc file holds one login per host: wrote \(named(chosen)), left out \(leftOut.map(named).joined(separator: ", "))\n")
                }
            }
            try Netrc.write(Netrc.render(machines), to: file)
            for choice in choices { console.errors.write(choice) }
            if global.json {
                console.output.write(JSONValue.object([("file", .string(file)), ("machines", .number(machines.count))]).rendered + "\n")
            } else {
                console.output.write("Wrote \(machines.count) machine\(machines.count == 1 ? "" : "s") to \(Describe.cell(file))\n")
            }
            if refused > 0 {
                throw CommandFailure(.dataError, "\(refused) host\(refused == 1 ? " was" : "s were") left out of \(file) (see above); replace those credentials with `credstore add`")
            }
        }

        /// Which space of a host speaks for it: https, then no realm, then the default port, and
        /// within a realm the method a lookup without one asks first (any, then Basic), as `get` does.
        private static func preferred(_ left: ProtectionSpace, _ right: ProtectionSpace) -> Bool {
            let methods = AuthenticationMethod.sentAsBasic
            func rank(_ space: ProtectionSpace) -> (Int, Int, Int, Int, String, Int) {
                (space.protocol == "https" ? 0 : 1, space.realm == nil ? 0 : 1,
                 space.port == (space.protocol == "https" ? 443 : 80) ? 0 : 1, space.port, space.realm ?? "",
                 methods.firstIndex(of: space.authenticationMethod) ?? methods.count)
            }
            return rank(left) < rank(right)
        }
    }
}

/// The netrc format, as curl and ftp read it.
package enum Netrc {
    /// One `machine` entry.
    package struct Machine: Equatable {
        package var host: String
        package var login: String
        package var password: String

        package init(host: String, login: String, password: String) {
            self.host = host
            self.login = login
            self.password = password
        }
    }

    /// An entry left out, and why (never a value but the machine's host).
    package struct Skipped: Equatable {
        /// The line the entry starts on, from 1.
        package var line: Int
        /// The entry's `machine` name; nil for a `default` entry.
        package var machine: String?
        /// Why it was left out, for the user.
        package var reason: String
        /// Whether the entry was refused as invalid (rather than being of a kind the store has no use for).
        package var refused = false
    }

    /// A parsed file: its complete entries (and the line each starts on), and those skipped.
    package struct Contents: Equatable {
        package var machines: [Machine] = []
        package var lines: [Int] = []
        package var skipped: [Skipped] = []
    }

    /// Parses netrc text: tokens separated by ASCII whitespace (CR included, so CRLF files read
    /// as LF ones), `"…"` quoting with backslash escapes as curl reads it, `#` comments to the end
    /// of the line where a keyword is expected, `macdef` bodies up to a blank line.
    ///
    /// Works on Unicode scalars: Swift's Characters fuse "\r\n" into one, which once made a
    /// comment swallow the rest of a CRLF file.
    ///
    /// - Throws: a data error (65) naming the line of an unknown keyword, a keyword without its
    ///   value, or a quoted value without its closing quote.
    package static func parse(_ text: String) throws -> Contents {
        let scalars = Array(text.unicodeScalars)
        var contents = Contents()
        var position = 0
        var line = 1
        var current: (line: Int, host: String?, login: String?, password: String?)?

        func isSpace(_ scalar: Unicode.Scalar) -> Bool {
            scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" || scalar == "\u{0B}" || scalar == "\u{0C}"
        }
        func advance() {
            if scalars[position] == "\n" { line += 1 }
            position += 1
        }
        func finish() {
            guard let entry = current else { return }
            current = nil
            guard let host = entry.host else {
                contents.skipped.append(Skipped(line: entry.line, machine: nil, reason: "a `default` entry: the store has no space for every host"))
                return
            }
            if let login = entry.login, let password = entry.password, !host.isEmpty, !login.isEmpty {
                contents.machines.append(Machine(host: host, login: login, password: password))
                contents.lines.append(entry.line)
            } else {
                let missing = entry.login?.isEmpty ?? true ? "login" : "password"
                contents.skipped.append(Skipped(line: entry.line, machine: host, reason: host.isEmpty ? "it has an empty host" : "it has no \(missing)"))
            }
        }
        /// The next token, or nil at the end of the text; skips `#` comments when `keyword`.
        func next(keyword: Bool) throws -> String? {
            while position < scalars.count {
                if isSpace(scalars[position]) {
                    advance()
                    continue
                }
                if keyword, scalars[position] == "#" {
                    while position < scalars.count, scalars[position] != "\n" { advance() }
                    continue
                }
                var token = String.UnicodeScalarView()
                if scalars[position] == "\"" {
                    let start = line
                    advance()
                    while true {
                        // A quoted value ends on its own line, as curl reads it.
                        guard position < scalars.count, scalars[position] != "\n", scalars[position] != "\r" else {
                            throw CommandFailure(.dataError, "line \(start): a quoted value has no closing quote; the netrc file is malformed and nothing was imported")
                        }
                        var scalar = scalars[position]
                        advance()
                        if scalar == "\"" { break }
                        if scalar == "\\", position < scalars.count, scalars[position] != "\n", scalars[position] != "\r" {
                            switch scalars[position] {
                            case "n": scalar = "\n"
                            case "r": scalar = "\r"
                            case "t": scalar = "\t"
                            default: scalar = scalars[position]
                            }
                            advance()
                        }
                        token.append(scalar)
                    }
                } else {
                    while position < scalars.count, !isSpace(scalars[position]) {
                        token.append(scalars[position])
                        advance()
                    }
                }
                return String(token)
            }
            return nil
        }
        func value(after keyword: String, at: Int) throws -> String {
            guard let value = try next(keyword: false) else {
                throw CommandFailure(.dataError, "line \(at): `\(keyword)` has no value; the netrc file is malformed and nothing was imported")
            }
            return value
        }

        while true {
            // The line a keyword is on: where its first scalar is, once whitespace and comments are behind.
            guard let keyword = try next(keyword: true) else { break }
            let at = line
            switch keyword {
            case "machine":
                finish()
                current = (at, try value(after: keyword, at: at), nil, nil)
            case "default":
                // curl's fallback for every host: the store has no such space.
                finish()
                current = (at, nil, nil, nil)
            case "login", "password", "account":
                let text = try value(after: keyword, at: at)
                guard current != nil else {
                    throw CommandFailure(.dataError, "line \(at): `\(keyword)` comes before any `machine`; the netrc file is malformed and nothing was imported")
                }
                if keyword == "login" { current?.login = text } else if keyword == "password" { current?.password = text }
            case "macdef":
                // A macro's body runs to the first blank line; it is for ftp, not for us.
                finish()
                _ = try value(after: keyword, at: at)
                while position < scalars.count, scalars[position] != "\n" { advance() }
                if position < scalars.count { advance() }
                while position < scalars.count {
                    var end = position
                    while end < scalars.count, scalars[end] != "\n" { end += 1 }
                    let blank = scalars[position..<end].allSatisfy(isSpace)
                    while position < end { advance() }
                    if position < scalars.count { advance() }
                    if blank { break }
                }
            default:
                throw CommandFailure(.dataError, "line \(at): unknown netrc keyword \(String(reflecting: keyword)); the netrc file is malformed and nothing was imported")
            }
        }
        finish()
        return contents
    }

    /// The text of a netrc file with one line per machine.
    package static func render(_ machines: [Machine]) -> String {
        machines.map { "machine \(quote($0.host)) login \(quote($0.login)) password \(quote($0.password))\n" }.joined()
    }

    /// A token as is, or quoted with backslash escapes when it is empty or holds whitespace,
    /// quotes, backslashes or a leading `#`.
    static func quote(_ token: String) -> String {
        // Scalars, not Characters: "\r\n" is one Character, which matches neither "\r" nor "\n".
        guard token.isEmpty || token.hasPrefix("#")
                || token.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0 == "\"" || $0 == "\\" }) else {
            return token
        }
        var quoted = "\""
        for scalar in token.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }

    /// Writes `text` to `path` as a new 0600 file renamed over the old one, so that no reader
    /// ever sees half a file or a moment of wider permissions.
    ///
    /// - Throws: an I/O error (74) when `path` is a symbolic link (writing through it would put
    ///   passwords wherever it points) or the folder cannot be written.
    static func write(_ text: String, to path: String) throws {
        var info = stat()
        if lstat(path, &info) == 0 {
            if (info.st_mode & S_IFMT) == S_IFLNK {
                throw CommandFailure(.ioError, "\(Describe.cell(path)) is a symbolic link; netrc export does not write through links, give the real path")
            }
            // The rename below replaces whatever is at the path: a device (/dev/null, as root), a
            // FIFO another program reads, would become a file of passwords.
            if (info.st_mode & S_IFMT) != S_IFREG {
                throw CommandFailure(.ioError, "\(Describe.cell(path)) is not a regular file; netrc export replaces only a regular file, give another path")
            }
        }
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw CommandFailure(.ioError, "could not create a file beside \(Describe.cell(path)): \(String(cString: strerror(errno))); check the folder exists and is writable")
        }
        var renamed = false
        defer {
            if !renamed { unlink(temporary) }
        }
        var bytes = Array(text.utf8)
        defer { for index in bytes.indices { bytes[index] = 0 } }
        var offset = 0
        var failed = fchmod(descriptor, 0o600) != 0
        while !failed, offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
            if written < 0, errno == EINTR { continue }
            if written <= 0 { failed = true } else { offset += written }
        }
        if !failed { failed = fsync(descriptor) != 0 }
        close(descriptor)
        guard !failed, rename(temporary, path) == 0 else {
            throw CommandFailure(.ioError, "could not write \(Describe.cell(path)): \(String(cString: strerror(errno))); nothing was changed")
        }
        renamed = true
    }
}
