import ArgumentParser
import CredentialStore

/// `credstore default URL --user U`: chooses which credential `get` answers with.
struct DefaultCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "default",
        _superCommandName: CredstoreCommand.name,
        abstract: "Make a stored user the default of its space.",
        discussion: "The user must already have a credential in the exact space (exit 1 otherwise).")

    @OptionGroup var space: SpaceOptions

    @Option(help: "The user to make the default.")
    var user: String

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let console = Console.current
        let protectionSpace = try space.protectionSpace()
        let missing = CommandFailure(.notFound, "no credential for \(user) at \(Describe.space(protectionSpace)); add it first with `credstore add \(space.request.arguments) --user \(ShellWords.quoted(user))`")
        let storage = try global.location(in: console).openExisting(console, orFail: missing)
        do {
            try storage.setDefault(user: user, for: protectionSpace)
        } catch CredentialStorageError.Code.notFound {
            let elsewhere = try RemoveCommand.elsewhere(user, near: protectionSpace, in: storage)
            throw elsewhere.isEmpty ? missing : CommandFailure(.notFound, "no credential for \(user) at \(Describe.space(protectionSpace))\(elsewhere)")
        }
    }
}
