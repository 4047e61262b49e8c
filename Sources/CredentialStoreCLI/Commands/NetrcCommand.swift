import ArgumentParser
import CredentialStore
import Foundation
import CredentialStoreFormats

/// `credstore netrc import|export FILE`: trades credentials with curl and the other tools that
/// read a netrc file.
struct NetrcCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "netrc",
        _superCommandName: CredstoreCommand.name,
        abstract: "Import a netrc file, or export the store's web credentials as one.",
        subcommands: [Import.self, Export.self])

    /// `credstore netrc import FILE`: stores each `machine` entry as a credential of its space.
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Store each machine's login and password as a permanent http or https credential.",
            discussion: """
                Each `machine HOST login USER password PASS` becomes a credential for \
                https://HOST (no realm), or for the scheme and port that --scheme and --port give. \
                An entry under a `# credstore: URL [realm "R"] [method M]` line, as `netrc export` \
                writes one above each entry, goes to that space whatever the options say, so an \
                exported file imported again changes nothing. The first entry of a space becomes \
                its default, as curl uses the first; a credential the store already holds with the \
                same password is left as it is and counted unchanged. `default` entries and \
                `macdef` macros are skipped, and each skipped entry is named on stderr with the \
                reason. A missing or unreadable file exits 74; a malformed one exits 65 and stores \
                nothing; an entry the store refuses (a host that is not a host name, a value with a \
                line break or NUL, a `# credstore:` line that names another host) is skipped, the \
                others are imported, and the exit status is 65.
                """)

        /// The schemes a netrc entry may go to: curl sends its password as Basic over either.
        enum Scheme: String, CaseIterable, ExpressibleByArgument {
            case https, http
        }

        @Argument(help: ArgumentHelp("The netrc file to read.", valueName: "file"), completion: .file())
        var file: String

        @Option(help: ArgumentHelp("The scheme of the entries without a `# credstore:` line.", valueName: "scheme"))
        var scheme: Scheme = .https

        @Option(help: ArgumentHelp("The port of the entries without a `# credstore:` line; without it, the scheme's own (443 or 80).", valueName: "port"))
        var port: Int?

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if let port, !(1...65535).contains(port) {
                throw ValidationError("--port must be 1 to 65535")
            }
        }

        func run() throws {
            let console = Console.current
            // Read whole, as curl reads it (curl stops at 128 KiB), up to a cap that keeps the
            // parse's memory small whatever the file's size.
            let text = try ImportFile(path: file).text(maximumBytes: Netrc.maximumFileBytes, format: "netrc file")
            // Parse and check all before storing any, so a malformed file changes nothing.
            let netrc = try Netrc.parse(text)
            var skipped = netrc.skipped
            var accepted: [(space: ProtectionSpace, credential: Credential)] = []
            for (machine, line) in zip(netrc.machines, netrc.lines) {
                // netrc names a host only (curl matches by host): the comment line export writes
                // says the rest, else the options do.
                let space = machine.space ?? ProtectionSpace(host: machine.host, port: port ?? 0, protocol: scheme.rawValue, realm: nil)
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
            let counts = try Self.store(accepted, in: storage)
            let imported = counts.added + counts.updated
            if global.json {
                console.output.write(JSONValue.object([
                    ("imported", .number(imported)), ("added", .number(counts.added)), ("updated", .number(counts.updated)),
                    ("unchanged", .number(counts.unchanged)), ("skipped", .number(skipped.count)),
                    ("skippedEntries", .array(skipped.map { entry in
                        .object([("line", .number(entry.line)), ("machine", .string(entry.machine)), ("reason", .string(entry.reason))])
                    })),
                ]).rendered + "\n")
            } else {
                let notes = (counts.unchanged > 0 ? ["\(counts.unchanged) unchanged"] : [])
                    + (skipped.isEmpty ? [] : ["skipped \(skipped.count); see above"])
                console.output.write("Imported \(imported) credential\(imported == 1 ? "" : "s") from \(file)"
                    + (notes.isEmpty ? "" : " (\(notes.joined(separator: ", ")))") + "\n")
            }
            let refused = skipped.filter(\.refused).count
            if refused > 0 {
                throw CommandFailure(.dataError, "\(file): \(refused) entr\(refused == 1 ? "y was" : "ies were") refused as invalid (see above); the other entries were imported")
            }
        }

        /// Writes the entries, the first of each space as its default, and counts what changed.
        ///
        /// An entry the space already holds as it is (the same password, and its default where
        /// the file makes it one) is not written again: an exported file imported back changes
        /// nothing, not even a modification time.
        private static func store(
            _ entries: [(space: ProtectionSpace, credential: Credential)], in storage: CredentialStorage
        ) throws -> (added: Int, updated: Int, unchanged: Int) {
            var counts = (added: 0, updated: 0, unchanged: 0)
            guard !entries.isEmpty else { return counts }
            var defaults: [ProtectionSpace: String] = [:]
            for entry in try storage.entries() where entry.isDefault { defaults[entry.space] = entry.user }
            // Each space as it stands before the import and then as the import leaves it.
            var passwords: [ProtectionSpace: [String: String]] = [:]
            var seen = Set<ProtectionSpace>()
            for (space, credential) in entries {
                let makeDefault = seen.insert(space).inserted
                if passwords[space] == nil { passwords[space] = try storage.credentials(for: space).mapValues(\.password) }
                let before = passwords[space]?[credential.user]
                if before == credential.password, !makeDefault || defaults[space] == credential.user {
                    counts.unchanged += 1
                    continue
                }
                if makeDefault {
                    try storage.setDefaultCredential(credential, for: space)
                } else {
                    try storage.set(credential, for: space)
                }
                if before == nil { counts.added += 1 } else { counts.updated += 1 }
                passwords[space]?[credential.user] = credential.password
                if makeDefault || defaults[space] == nil { defaults[space] = credential.user }
            }
            return counts
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
                and the default port first), under a `# credstore: URL [realm "R"] [method M]` \
                line naming its space, which curl skips as a comment and `netrc import` reads \
                back. The file is written 0600 and replaced atomically; a symbolic link is refused. Values with spaces or quotes are quoted as curl reads \
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
                    // The space goes in its comment line, so that an import files it where it was.
                    machines.append(Netrc.Machine(host: space.host, login: credential.user, password: credential.password, space: space))
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
