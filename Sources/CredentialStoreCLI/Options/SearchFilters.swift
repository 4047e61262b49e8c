import ArgumentParser
import CredentialStore
import Foundation

/// The filters `list` and `search` share, and the listing they print.
struct SearchFilters: ParsableArguments {
    @Option(help: ArgumentHelp("Only hosts matching this pattern; `*` matches any run of characters.", valueName: "pattern"))
    var host: String?

    @Option(help: "Only credentials with this label.")
    var label: String?

    @Option(name: .customLong("attr"), help: ArgumentHelp("Only credentials with this attribute and value (repeatable).", valueName: "name=value"))
    var attributes: [String] = []

    @Option(help: "Only credentials of this tier.")
    var persistence: PersistenceName?

    @Flag(help: "Only credentials whose password has expired.")
    var expired = false

    func validate() throws {
        _ = try query()
    }

    /// The library query these filters make.
    func query() throws -> CredentialQuery {
        var query = CredentialQuery(host: host, label: label, attributes: try Self.pairs(attributes), expired: expired ? true : nil)
        query.persistence = persistence?.persistence
        return query
    }

    /// `--attr NAME=VALUE` arguments as a map (the value may hold `=`; the last of a name wins).
    static func pairs(_ arguments: [String]) throws -> [String: String] {
        var pairs: [String: String] = [:]
        for attribute in arguments.map(\.unicodeScalars) {
            // By Unicode scalars: `=` followed by a combining mark is one Character, equal to no `=`.
            guard let equals = attribute.firstIndex(of: "="), equals != attribute.startIndex else {
                throw ValidationError("--attr takes NAME=VALUE")
            }
            pairs[String(Substring(attribute[..<equals]))] = String(Substring(attribute[attribute.index(after: equals)...]))
        }
        return pairs
    }

    /// Prints what the filters select, as a table or JSON; whether anything was selected.
    @discardableResult
    func list(_ global: GlobalOptions) throws -> Bool {
        let console = Console.current
        let storage = try global.location(in: console).openIfPresent(console)
        let entries = try storage?.entries(matching: query()) ?? []
        let now = Date()
        if global.json {
            console.output.write(JSONValue.array(entries.map { ListCommand.json($0, now: now) }).rendered + "\n")
            return !entries.isEmpty
        }
        guard !entries.isEmpty else { return false }
        // Passwords, TLS identities and server trust (pins) apart, each with the columns that fit it.
        let passwords = entries.filter { ListCommand.Kind($0) == .password }
        var tables: [String] = []
        if !passwords.isEmpty { tables.append(Self.passwordTable(passwords, now: now)) }
        for kind in [ListCommand.Kind.identity, .serverTrust] {
            let items = entries.filter { ListCommand.Kind($0) == kind }
            guard !items.isEmpty else { continue }
            var table = Table(header: [kind == .identity ? "TLS IDENTITY FOR" : "SERVER TRUST FOR", "PORT", "PERSISTENCE", "MODIFIED", "EXPIRES", "LABEL"])
            for item in items {
                table.rows.append([
                    item.space.host, item.space.port == 0 ? "any" : String(item.space.port), item.persistence.rawValue,
                    item.modified.map(Describe.timestamp) ?? "-",
                    item.expires.map { Describe.timestamp($0) + (item.isExpired(at: now) ? " (expired)" : "") } ?? "-",
                    item.label ?? "-",
                ])
            }
            tables.append(table.rendered)
        }
        console.output.write(tables.joined(separator: "\n"))
        return true
    }

    /// The table of password credentials.
    private static func passwordTable(_ entries: [CredentialEntry], now: Date) -> String {
        var table = Table(header: ["HOST", "PORT", "PROTOCOL", "REALM", "METHOD", "USER", "PERSISTENCE", "DEFAULT", "MODIFIED", "EXPIRES", "LABEL"])
        for entry in entries {
            let space = entry.space
            table.rows.append([
                space.host,
                String(space.port),
                space.proxyType.map { "\($0.rawValue) proxy" } ?? space.protocol ?? "-",
                space.realm.map { $0.isEmpty ? "\"\"" : $0 } ?? "-",
                Describe.method(space.authenticationMethod),
                entry.user,
                entry.persistence.rawValue,
                entry.isDefault ? "yes" : "",
                entry.modified.map(Describe.timestamp) ?? "-",
                entry.expires.map { Describe.timestamp($0) + (entry.isExpired(at: now) ? " (expired)" : "") } ?? "-",
                entry.label ?? "-",
            ])
        }
        return table.rendered
    }
}
