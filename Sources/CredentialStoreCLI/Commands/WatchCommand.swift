package import ArgumentParser
package import CredentialStore
package import Foundation

/// `credstore watch`: prints every change to the store as it happens, from any process.
package struct WatchCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "watch",
        _superCommandName: CredstoreCommand.name,
        abstract: "Print each change to the store as it happens.",
        discussion: """
            One line per change (added, updated, removed, defaultChanged), from this machine's \
            other processes within a second; --json prints one JSON object per line. Never a \
            password. Runs until interrupted; a "watching" line on stderr says when it is ready.
            """)

    @OptionGroup var global: GlobalOptions

    package init() {}

    package func run() async throws {
        let console = Console.current
        let location = global.location(in: console)
        let storage = try location.openOrCreate(console)
        let changes = storage.changes()
        console.errors.write("credstore: watching \(location.path); press Ctrl-C to stop\n")
        for await change in changes {
            console.output.write((global.json ? Self.json(change, at: Date()).rendered : Self.line(change, at: Date())) + "\n")
        }
    }

    /// `2025-01-31T09:30:00Z added https://api.example.com:443 user alice (permanent, other process)`
    package static func line(_ change: CredentialChange, at date: Date) -> String {
        let origin = switch change.origin {
        case .thisProcess: "this process"
        case .otherProcess: "other process"
        case .syncImport: "sync import"
        }
        return "\(Describe.timestamp(date)) \(change.kind.rawValue) \(Describe.space(change.space)) user \(Describe.cell(change.user)) (\(change.persistence.rawValue), \(origin))"
    }

    /// One line of `watch --json`, keys in the documented order.
    static func json(_ change: CredentialChange, at date: Date) -> JSONValue {
        .object([
            ("time", .string(Describe.timestamp(date))),
            ("kind", .string(change.kind.rawValue)),
            ("origin", .string(change.origin.rawValue)),
            ("user", .string(change.user)),
            ("persistence", .string(change.persistence.rawValue)),
            ("space", Describe.spaceJSON(change.space)),
        ])
    }
}
