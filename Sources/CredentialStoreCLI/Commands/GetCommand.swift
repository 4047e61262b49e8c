import ArgumentParser
import CredentialStore
import Foundation

/// `credstore get URL [--user U]`: prints a password for scripts and tools.
struct GetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        _superCommandName: CredstoreCommand.name,
        abstract: "Print the password for a URL.",
        discussion: """
            Prints the password alone and a newline. With --user, that user's credential in the \
            exact space (URL, --realm, --method, --proxy). Without it, the default credential: \
            the exact space's, else, when no --realm is given, the one space on the URL's \
            scheme, host and port that has a default. Several such spaces are ambiguous (exit \
            65): name the realm. When the only answer has expired, no password is printed (--json \
            still shows it, marked expired) and the exit is 75.
            """)

    @OptionGroup var space: SpaceOptions

    @Option(help: "The user whose credential to print (default: the space's default credential).")
    var user: String?

    @OptionGroup var global: GlobalOptions

    /// What to look up, apart from how the command line said it.
    var lookup: Lookup {
        Lookup(space: space.request, user: user, store: global.store, keyFile: global.keyFile, json: global.json)
    }

    func run() throws {
        try lookup.run(Console.current)
    }
}
