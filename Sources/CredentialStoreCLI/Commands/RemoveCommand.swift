import ArgumentParser
import CredentialStore

/// `credstore remove URL --user U`: removes one user's credential from a space.
struct RemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove a credential.",
        discussion: """
            Removes the user's credential from the exact space (URL, --realm, --method, --proxy); \
            exit 1 if there is none. A synchronizable credential is removed only with \
            --synchronizable (exit 64 without it), since that removes it on every synced machine.
            """)

    @OptionGroup var space: SpaceOptions

    @Option(help: "The user whose credential to remove.")
    var user: String

    @Flag(help: "Confirm the removal of a synchronizable credential, on every synced machine.")
    var synchronizable = false

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let console = Console.current
        let protectionSpace = try space.protectionSpace()
        let nothing = CommandFailure(.notFound, "no credential for \(user) at \(Describe.space(protectionSpace)); nothing was removed (see `credstore list`)")
        let storage = try global.location(in: console).openExisting(console, orFail: nothing)
        let removed: Bool
        do {
            removed = try storage.remove(user: user, for: protectionSpace,
                                         options: synchronizable ? .removeSynchronizable : [])
        } catch CredentialStorageError.Code.synchronizableRemovalNeedsOption {
            throw CommandFailure(.usage, "the credential of \(user) at \(Describe.space(protectionSpace)) is synchronizable, so removing it removes it on every synced machine; add --synchronizable to confirm")
        }
        guard removed else { throw nothing }
    }
}
