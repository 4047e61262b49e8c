import ArgumentParser
import CredentialStore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `credstore netrc import|export FILE`: trades credentials with curl and the other tools that
/// read a netrc file.
struct NetrcCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "netrc",
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
                uses the first. `default` entries and `macdef` macros are skipped. A missing or \
                unreadable file exits 74; a malformed one exits 65 and stores nothing.
                """)

        @Argument(help: ArgumentHelp("The netrc file to read.", valueName: "file"), completion: .file())
        var file: String

        @OptionGroup var global: GlobalOptions

        func run() throws {
            let console = Console.current
            let text: String
            do {
                text = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw CommandFailure(.ioError, "could not read \(file) as a UTF-8 text file; check its path and permissions")
            }
            // Parse all before storing any, so a malformed file changes nothing.
            let netrc = try Netrc.parse(text)
            let storage = try global.location(in: console).openOrCreate(console)
            var seen = Set<ProtectionSpace>()
            for machine in netrc.machines {
                let space = ProtectionSpace(host: machine.host, port: 0, protocol: "https", realm: nil)
                let credential = Credential(user: machine.login, password: machine.password, persistence: .permanent)
                do {
                    if seen.insert(space).inserted {
                        try storage.setDefaultCredential(credential, for: space)
                    } else {
                        try storage.set(credential, for: space)
                    }
                } catch CredentialStorageError.Code.invalidProtectionSpace {
                    throw CommandFailure(.dataError, "\(file): \(String(reflecting: machine.host)) is not a host name; nothing after it was imported")
                }
            }
            if global.json {
                console.output.write(JSONValue.object([("imported", .number(netrc.machines.count)), ("skipped", .number(netrc.skipped))]).rendered + "\n")
            } else {
                console.output.write("Imported \(netrc.machines.count) credential\(netrc.machines.count == 1 ? "" : "s") from \(file)"
                    + (netrc.skipped > 0 ? " (skipped \(netrc.skipped) without a host, login or password)" : "") + "\n")
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
            let storage = try global.location(in: console).openOrCreate(console)
            let spaces = try storage.entries().filter {
                $0.isDefault && $0.space.proxyType == nil && ($0.space.protocol == "https" || $0.space.protocol == "http")
                    && ($0.persistence == .permanent || $0.persistence == .synchronizable)
            }.map(\.space)
            var machines: [Netrc.Machine] = []
            for (_, group) in Dictionary(grouping: spaces, by: \.host).sorted(by: { $0.key < $1.key }) {
                for space in group.sorted(by: Self.preferred) {
                    guard let credential = try storage.defaultCredential(for: space) else { continue }
                    machines.append(Netrc.Machine(host: space.host, login: credential.user, password: credential.password))
                    break
                }
            }
            try Netrc.write(Netrc.render(machines), to: file)
            if global.json {
                console.output.write(JSONValue.object([("file", .string(file)), ("machines", .number(machines.count))]).rendered + "\n")
            } else {
                console.output.write("Wrote \(machines.count) machine\(machines.count == 1 ? "" : "s") to \(file)\n")
            }
        }

        /// Which space of a host speaks for it: https, then no realm, then the default port.
        private static func preferred(_ left: ProtectionSpace, _ right: ProtectionSpace) -> Bool {
            func rank(_ space: ProtectionSpace) -> (Int, Int, Int, Int, String) {
                (space.protocol == "https" ? 0 : 1, space.realm == nil ? 0 : 1,
                 space.port == (space.protocol == "https" ? 443 : 80) ? 0 : 1, space.port, space.realm ?? "")
            }
            return rank(left) < rank(right)
        }
    }
}

/// The netrc format, as curl and ftp read it.
enum Netrc {
    /// One `machine` entry.
    struct Machine: Equatable {
        var host: String
        var login: String
        var password: String
    }

    /// A parsed file: its complete entries, and how many were skipped (`default`, or missing a
    /// login or password).
    struct Contents: Equatable {
        var machines: [Machine] = []
        var skipped = 0
    }

    /// Parses netrc text: whitespace-separated tokens, `"…"` quoting with backslash escapes as
    /// curl reads it, `#` comments where a keyword is expected, `macdef` bodies up to a blank line.
    ///
    /// - Throws: a data error (65) naming the line of an unknown keyword or a keyword without its value.
    static func parse(_ text: String) throws -> Contents {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { Array($0) }
        var contents = Contents()
        var line = 0, column = 0
        var current: (host: String?, login: String?, password: String?)?

        func finish() {
            guard let entry = current else { return }
            if let host = entry.host, let login = entry.login, let password = entry.password, !host.isEmpty, !login.isEmpty {
                contents.machines.append(Machine(host: host, login: login, password: password))
            } else {
                contents.skipped += 1
            }
            current = nil
        }
        /// The next token, or nil at the end of the text; skips `#` comments when `keyword`.
        func next(keyword: Bool) -> String? {
            while line < lines.count {
                let characters = lines[line]
                while column < characters.count, characters[column].isWhitespace { column += 1 }
                if column >= characters.count || (keyword && characters[column] == "#") {
                    line += 1
                    column = 0
                    continue
                }
                var token = ""
                if characters[column] == "\"" {
                    column += 1
                    while column < characters.count, characters[column] != "\"" {
                        var character = characters[column]
                        if character == "\\", column + 1 < characters.count {
                            column += 1
                            switch characters[column] {
                            case "n": character = "\n"
                            case "r": character = "\r"
                            case "t": character = "\t"
                            default: character = characters[column]
                            }
                        }
                        token.append(character)
                        column += 1
                    }
                    column += 1
                } else {
                    while column < characters.count, !characters[column].isWhitespace {
                        token.append(characters[column])
                        column += 1
                    }
                }
                return token
            }
            return nil
        }
        func value(after keyword: String) throws -> String {
            let at = line + 1
            guard let value = next(keyword: false) else {
                throw CommandFailure(.dataError, "line \(at): `\(keyword)` has no value; the netrc file is malformed and nothing was imported")
            }
            return value
        }

        while let keyword = next(keyword: true) {
            let at = line + 1
            switch keyword {
            case "machine":
                finish()
                current = (try value(after: keyword), nil, nil)
            case "default":
                // curl's fallback for every host: the store has no such space.
                finish()
                current = (nil, nil, nil)
            case "login", "password", "account":
                let text = try value(after: keyword)
                guard current != nil else {
                    throw CommandFailure(.dataError, "line \(at): `\(keyword)` comes before any `machine`; the netrc file is malformed and nothing was imported")
                }
                if keyword == "login" { current?.login = text } else if keyword == "password" { current?.password = text }
            case "macdef":
                // A macro's body runs to the first blank line; it is for ftp, not for us.
                finish()
                _ = try value(after: keyword)
                line += 1
                column = 0
                while line < lines.count, !lines[line].allSatisfy(\.isWhitespace) { line += 1 }
            default:
                throw CommandFailure(.dataError, "line \(at): unknown netrc keyword \(String(reflecting: keyword)); the netrc file is malformed and nothing was imported")
            }
        }
        finish()
        return contents
    }

    /// The text of a netrc file with one line per machine.
    static func render(_ machines: [Machine]) -> String {
        machines.map { "machine \(quote($0.host)) login \(quote($0.login)) password \(quote($0.password))\n" }.joined()
    }

    /// A token as is, or quoted with backslash escapes when it is empty or holds whitespace,
    /// quotes, backslashes or a leading `#`.
    static func quote(_ token: String) -> String {
        guard token.isEmpty || token.hasPrefix("#") || token.contains(where: { $0.isWhitespace || $0 == "\"" || $0 == "\\" }) else {
            return token
        }
        var quoted = "\""
        for character in token {
            switch character {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            default: quoted.append(character)
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
        if lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK {
            throw CommandFailure(.ioError, "\(path) is a symbolic link; netrc export does not write through links, give the real path")
        }
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw CommandFailure(.ioError, "could not create a file beside \(path): \(String(cString: strerror(errno))); check the folder exists and is writable")
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
            throw CommandFailure(.ioError, "could not write \(path): \(String(cString: strerror(errno))); nothing was changed")
        }
        renamed = true
    }
}
