import ArgumentParser
import CredentialStore
import Foundation

/// `credstore lock`: forgets the session's unlock at once.
struct LockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        _superCommandName: CredstoreCommand.name,
        abstract: "Forget a passphrase store's unlock now.",
        discussion: "Removes what `credstore unlock` kept in the kernel keyring (both keyrings); the next command asks for the passphrase again.")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let console = Console.current
        let location = global.location(in: console)
        guard location.storeExists else { throw CommandFailure(.notFound, "there is no store at \(location.path)") }
        let wasUnlocked = try CredentialStorage.lock(storeAt: location.databaseURL)
        if global.json {
            console.output.write(JSONValue.object([("unlocked", .bool(false)), ("wasUnlocked", .bool(wasUnlocked))]).rendered + "\n")
        }
    }
}
