import ArgumentParser
import CredentialStore
import Foundation

/// `credstore search`: the credentials that match every filter given.
struct SearchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        _superCommandName: CredstoreCommand.name,
        abstract: "Find credentials by host pattern, label, attribute, tier or expiry, without passwords.",
        discussion: """
            Every filter given must hold: --host '*.example.com' (a `*` matches any run of \
            characters), --label TEXT, --attr NAME=VALUE (repeatable), --persistence TIER, \
            --expired. Output as `credstore list`; exit 1 when nothing matches.
            """)

    @OptionGroup var filters: SearchFilters
    @OptionGroup var global: GlobalOptions

    func run() throws {
        guard try filters.list(global) else {
            throw CommandFailure(.notFound, "no credential matches")
        }
    }
}
