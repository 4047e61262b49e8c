import ArgumentParser
import CredentialStore
import Foundation

/// `credstore list`: every space and user in the store, never a password; with filters, what
/// `credstore search` finds.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        _superCommandName: CredstoreCommand.name,
        abstract: "List every stored credential, without passwords.",
        discussion: """
            A table sorted by host, port, realm and user; --json gives an array of objects. The \
            filters of `credstore search` (--host, --label, --attr, --persistence, --expired) \
            narrow the list.
            """)

    @OptionGroup var filters: SearchFilters
    @OptionGroup var global: GlobalOptions

    func run() throws {
        try filters.list(global)
    }

    /// One element of `list --json`, keys in the documented order.
    static func json(_ entry: CredentialEntry, now: Date) -> JSONValue {
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
            ("expires", .string(entry.expires.map(Describe.timestamp))),
            ("expired", .bool(entry.isExpired(at: now))),
            ("label", .string(entry.label)),
            ("comment", .string(entry.comment)),
            ("attributes", .object(entry.attributes.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
            ("hasRefreshToken", .bool(entry.hasRefreshToken)),
            ("kind", .string(Kind(entry).rawValue)),
        ])
    }
}
