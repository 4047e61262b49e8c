import ArgumentParser
import CredentialStore

/// `credstore passwd`: changes the passphrase of a passphrase store.
struct PasswdCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        _superCommandName: CredstoreCommand.name,
        abstract: "Change the store's passphrase.",
        discussion: """
            The current passphrase comes from CREDSTORE_PASSPHRASE or a prompt, the new one from \
            CREDSTORE_NEW_PASSPHRASE or typed twice at a prompt. The root key is rewrapped in one \
            transaction: an interruption leaves the old passphrase or the new one working.
            """)

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let console = Console.current
        let location = global.location(in: console)
        guard location.storeExists else {
            throw CommandFailure(.notFound, "there is no store at \(location.path); create one with `credstore init --passphrase`")
        }
        // The current passphrase is asked even when the store is unlocked in this session: the
        // session's processes may read the store, not take it from its owner.
        let storage = try location.storeExistsAsPassphraseStore()
            ? location.openWithPassphraseOnly(console, logger: StoreAccess.logger(console), for: "passwd")
            : location.openExisting(console, orFail: CommandFailure(.notFound, "there is no store at \(location.path)"))
        guard storage.maintenance.isPassphraseProtected else {
            throw CommandFailure(.usage, "the store \(location.path) is unlocked by a key file, so it has no passphrase to change; keep the key file safe instead")
        }
        let newPassphrase = try console.readNewPassphrase(from: "CREDSTORE_NEW_PASSPHRASE", prompt: "New passphrase for \(location.path): ")
        try storage.maintenance.changePassphrase(to: newPassphrase)
        if !global.json { console.output.write("Changed the passphrase of \(location.path)\n") }
    }
}
