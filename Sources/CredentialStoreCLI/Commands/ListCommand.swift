import ArgumentParser
import CredentialStore

/// `credstore list`: every space and user in the store, never a password.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        _superCommandName: CredstoreCommand.name,
        abstract: "List every stored credential, without passwords.",
        discussion: "A table sorted by host, port, realm and user; --json gives an array of objects.")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let console = Console.current
        let entries = try global.location(in: console).openIfPresent(console)?.entries() ?? []
        if global.json {
            console.output.write(JSONValue.array(entries.map(Self.json)).rendered + "\n")
            return
        }
        guard !entries.isEmpty else { return }
        var table = Table(header: ["HOST", "PORT", "PROTOCOL", "REALM", "METHOD", "USER", "PERSISTENCE", "DEFAULT", "MODIFIED"])
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
            ])
        }
        console.output.write(table.rendered)
    }

    /// One element of `list --json`, keys in the documented order.
    static func json(_ entry: CredentialEntry) -> JSONValue {
        let space = entry.space
        return .object([
            ("host", .string(space.host)),
            ("port", .number(space.port)),
            ("protocol", .string(space.protocol)),
            ("realm", .string(space.realm)),
            ("method", .string(Describe.methodJSON(space.authenticationMethod))),
            ("proxyType", .string(space.proxyType?.rawValue)),
            ("user", .string(entry.user)),
            ("persistence", .string(entry.persistence.rawValue)),
            ("isDefault", .bool(entry.isDefault)),
            ("created", .string(entry.created.map(Describe.timestamp))),
            ("modified", .string(entry.modified.map(Describe.timestamp))),
        ])
    }
}
