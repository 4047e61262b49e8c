import ArgumentParser
import CredentialStore

/// `credstore remove URL --user U`: removes one user's credential from a space.
struct RemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        _superCommandName: CredstoreCommand.name,
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
        guard removed else {
            throw CommandFailure(.notFound, nothing.message + (try Self.elsewhere(user, near: protectionSpace, in: storage)))
        }
    }

    /// Where else `user` has a credential that answers lookups of `space` (the same realm under a
    /// compatible method, which `get` and challenges fall back to), as advice to add to a miss:
    /// without it, a user removing a credential would be told it is not there while it still answers.
    static func elsewhere(_ user: String, near space: ProtectionSpace, in storage: CredentialStorage) throws -> String {
        for candidate in space.compatibleSpaces.dropFirst() where try storage.credentials(for: candidate)[user] != nil {
            return "; \(user) has one at \(Describe.space(candidate)), which answers for it: add --method \(Describe.method(candidate.authenticationMethod))"
        }
        return ""
    }
}
