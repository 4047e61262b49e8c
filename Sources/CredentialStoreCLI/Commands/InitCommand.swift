import ArgumentParser
import CredentialStore
import Foundation

/// `credstore init [--passphrase]`: creates a store, unlocked by a key file or a passphrase.
struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        _superCommandName: CredstoreCommand.name,
        abstract: "Create a store.",
        discussion: """
            Without --passphrase the store is unlocked by a key file (store.key beside it, or \
            --key-file), which is created too. With --passphrase it is unlocked by a passphrase \
            from CREDSTORE_PASSPHRASE or typed twice at a prompt. Running init on an existing \
            store of the same kind changes nothing.

            credstore remembers which store it last opened at each path (its id, and whether a \
            key file or a passphrase unlocks it), and refuses (exit 77) a store that was put in \
            its place. If you replaced the store yourself, --force accepts the store that is \
            there now, once it opens with its key, and remembers it instead.
            """)

    @Flag(help: "Lock the store with a passphrase rather than a key file.")
    var passphrase = false

    @Flag(help: "Accept the store now at the path as this path's store, when it replaced another on purpose.")
    var force = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if passphrase, global.keyFile != nil {
            throw ValidationError("--passphrase and --key-file exclude each other: a passphrase store has no key file")
        }
    }

    func run() throws {
        let console = Console.current
        let location = global.location(in: console)
        let wanted: StoreProtection = passphrase ? .passphrase : .keyFile

        if force {
            try CredentialStorage.forgetRecordedStore(at: location.databaseURL)
        }
        if location.storeExists, let existing = try CredentialStorage.protection(ofStoreAt: location.databaseURL) {
            guard existing == wanted else {
                throw CommandFailure(.usage, existing == .passphrase
                    ? "a passphrase store already exists at \(location.path); add --passphrase, or choose another --store for a key-file store"
                    : "a key-file store already exists at \(location.path); choose another --store for a passphrase store")
            }
            // With --force, opened with its key, so that it is recorded as this path's store.
            if force {
                _ = try location.openExisting(console, orFail: CommandFailure(.notFound, "the store \(location.path) went away; run init again"))
            }
            report(location, protection: existing, created: false, console)
            return
        }

        let key: StoreKey = passphrase
            ? .passphrase(try console.readNewPassphrase(from: "CREDSTORE_PASSPHRASE", prompt: "New passphrase for \(location.path): "))
            : .keyFile(location.keyFileURL)
        _ = try CredentialStorage(at: location.databaseURL, key: key, logger: StoreLocation.logger(console))
        report(location, protection: wanted, created: true, console)
    }

    private func report(_ location: StoreLocation, protection: StoreProtection, created: Bool, _ console: Console) {
        let keyFile = protection == .keyFile ? location.keyFileURL.path : nil
        if global.json {
            console.output.write(JSONValue.object([
                ("store", .string(location.path)),
                ("protection", .string(protection.rawValue)),
                ("keyFile", .string(keyFile)),
                ("created", .bool(created)),
            ]).rendered + "\n")
            return
        }
        let kind = keyFile.map { "unlocked by the key file \($0)" } ?? "locked with a passphrase"
        console.output.write(created ? "Created \(location.path), \(kind)\n" : "\(location.path) already exists, \(kind)\n")
    }
}
