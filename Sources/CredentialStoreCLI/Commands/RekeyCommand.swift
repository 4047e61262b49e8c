import ArgumentParser
import CredentialStore

/// `credstore rekey`: rotates the root key and re-encrypts every row.
struct RekeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rekey",
        _superCommandName: CredstoreCommand.name,
        abstract: "Rotate the store's root key.",
        discussion: """
            A new random root key; every credential and default re-encrypted under it, in one \
            transaction. The key file or passphrase stays the same. Processes that have the store \
            open follow the new key on their next access.
            """)

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let console = Console.current
        let location = global.location(in: console)
        let storage = try location.openExisting(console, orFail: CommandFailure(.notFound, "there is no store at \(location.path); nothing to rekey"))
        try storage.maintenance.rekey()
        if !global.json { console.output.write("Rotated the root key of \(location.path)\n") }
    }
}
