package import CredentialStore
import Foundation

/// The netrc format, as curl and ftp read it.
package enum Netrc {
    /// One `machine` entry.
    package struct Machine: Equatable {
        package var host: String
        package var login: String
        package var password: String
        /// The space a `# credstore:` comment line above the entry names (see ``Netrc/spaceComment(for:)``);
        /// nil for an entry without one, which an import places by its options.
        package var space: ProtectionSpace?

        package init(host: String, login: String, password: String, space: ProtectionSpace? = nil) {
            self.host = host
            self.login = login
            self.password = password
            self.space = space
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

        package init(line: Int, machine: String?, reason: String, refused: Bool = false) {
            self.line = line
            self.machine = machine
            self.reason = reason
            self.refused = refused
        }
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
    /// A `# credstore:` comment that starts a line gives the next keyword, when that is
    /// `machine`, its space (``Machine/space``); one that does not read as a space of the
    /// entry's host makes the entry a refused ``Skipped``, never one filed elsewhere.
    ///
    /// Works on Unicode scalars: Swift's Characters fuse "\r\n" into one, which once made a
    /// comment swallow the rest of a CRLF file.
    ///
    /// - Throws: a data error (65) naming the line of an unknown keyword, a keyword without its
    ///   value, or a quoted value without its closing quote.
    /// The longest netrc file read: 64 times what curl reads (128 KiB), room for a store's
    /// export of thousands of credentials, small enough to parse in memory.
    package static let maximumFileBytes = 8 << 20

    package static func parse(_ text: String) throws -> Contents {
        let scalars = Array(text.unicodeScalars)
        var contents = Contents()
        var position = 0
        var line = 1
        var current: (line: Int, host: String?, login: String?, password: String?, comment: String?)?
        // The last `# credstore:` comment since the previous token: it belongs to the keyword that follows.
        var pendingComment: String?

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
                var machine = Machine(host: host, login: login, password: password)
                if let comment = entry.comment {
                    switch space(fromComment: comment, machine: host) {
                    case .success(let space): machine.space = space
                    case .failure(let refusal):
                        contents.skipped.append(Skipped(line: entry.line, machine: host, reason: refusal.reason, refused: true))
                        return
                    }
                }
                contents.machines.append(machine)
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
                    let start = position
                    while position < scalars.count, scalars[position] != "\n" { advance() }
                    // Only at the start of a line, where curl too reads a comment: elsewhere curl
                    // would take its words for tokens.
                    if start == 0 || scalars[start - 1] == "\n" {
                        var text = String.UnicodeScalarView(scalars[start..<position])
                        if text.last == "\r" { text.removeLast() }
                        if let body = spaceCommentBody(String(text)) { pendingComment = body }
                    }
                    continue
                }
                var token = String.UnicodeScalarView()
                if scalars[position] == "\"" {
                    let start = line
                    advance()
                    while true {
                        // A quoted value ends on its own line, as curl reads it.
                        guard position < scalars.count, scalars[position] != "\n", scalars[position] != "\r" else {
                            throw FormatError("line \(start): a quoted value has no closing quote; the netrc file is malformed and nothing was imported")
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
                throw FormatError("line \(at): `\(keyword)` has no value; the netrc file is malformed and nothing was imported")
            }
            return value
        }

        while true {
            // The line a keyword is on: where its first scalar is, once whitespace and comments are behind.
            guard let keyword = try next(keyword: true) else { break }
            let at = line
            let comment = pendingComment
            pendingComment = nil
            switch keyword {
            case "machine":
                finish()
                current = (at, try value(after: keyword, at: at), nil, nil, comment)
            case "default":
                // curl's fallback for every host: the store has no such space.
                finish()
                current = (at, nil, nil, nil, nil)
            case "login", "password", "account":
                let text = try value(after: keyword, at: at)
                guard current != nil else {
                    throw FormatError("line \(at): `\(keyword)` comes before any `machine`; the netrc file is malformed and nothing was imported")
                }
                // A second login or password in one entry is passed over, as curl does: the
                // import stores what curl would send.
                if keyword == "login", current?.login == nil { current?.login = text }
                if keyword == "password", current?.password == nil { current?.password = text }
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
                // The word is not repeated: after `password correct horse`, it is the password's rest.
                throw FormatError("line \(at): a word where a netrc keyword (machine, login, password, account, macdef, default) should be; a value with spaces must be quoted (\"…\"). The netrc file is malformed and nothing was imported")
            }
        }
        finish()
        return contents
    }

    /// The text of a netrc file with one line per machine, each under the `# credstore:` comment
    /// line of its space when it has one.
    package static func render(_ machines: [Machine]) -> String {
        machines.map { machine in
            (machine.space.map { spaceComment(for: $0) + "\n" } ?? "")
                + "machine \(quote(machine.host)) login \(quote(machine.login)) password \(quote(machine.password))\n"
        }.joined()
    }

    /// A token as is, or quoted with backslash escapes when it is empty or holds whitespace,
    /// quotes, backslashes or a leading `#` (or, `always`, quoted whatever it holds).
    static func quote(_ token: String, always: Bool = false) -> String {
        // Scalars, not Characters: "\r\n" is one Character, which matches neither "\r" nor "\n".
        guard always || token.isEmpty || token.unicodeScalars.first == "#"
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
}
