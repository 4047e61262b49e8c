import ArgumentParser
import CredentialStore
import Foundation

/// `credstore init [--passphrase | --seal-with systemd-creds]`: creates a store, unlocked by a key
/// file (plain, or sealed to this machine) or a passphrase.
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

            With --seal-with systemd-creds the key file is sealed to this machine by \
            systemd-creds (its TPM2 where it has one, else its host key): the store opens \
            unattended here and nowhere else. On an existing key-file store it seals the key \
            file in place. Before systemd 256 only root can seal with the host key.

            credstore remembers which store it last opened at each path (its id, and whether a \
            key file or a passphrase unlocks it) and the newest state it saw of each store, and \
            refuses (exit 77) a store that was put in its place or an older copy put back. If you \
            did that yourself, --force accepts the store that is there now, as it is, once it \
            opens with its key. To go back to a file `credstore backup` wrote, use \
            `credstore restore FILE` instead.
            """)

    @Flag(help: "Lock the store with a passphrase rather than a key file.")
    var passphrase = false

    @Option(name: .customLong("seal-with"), help: "Seal the key file to this machine with this tool.")
    var sealWith: SealName?

    @Flag(help: "Accept the store now at the path as it is, when you put it (or an older copy) there on purpose.")
    var force = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if passphrase, global.keyFile != nil {
            throw ValidationError("--passphrase and --key-file exclude each other: a passphrase store has no key file")
        }
        if passphrase, sealWith != nil {
            throw ValidationError("--passphrase and --seal-with exclude each other: a passphrase store has no key file to seal")
        }
    }

    func run() throws {
        let console = Console.current
        let location = global.location(in: console)
        let wanted: StoreProtection = passphrase ? .passphrase : .keyFile

        if force {
            try StoreFile.forgetRecordedStore(at: location.databaseURL)
        }
        if location.storeExists, let existing = try StoreFile.protection(ofStoreAt: location.databaseURL) {
            // --force accepts the store that is there, whichever way it is unlocked: the advice
            // for a rolled-back or replaced store names `init --force` alone.
            guard existing == wanted || (force && !passphrase && global.keyFile == nil && sealWith == nil) else {
                throw Self.otherKind(existing, at: location)
            }
            // With --force, opened with its key and accepted as it is: recorded as this path's
            // store, and its rollback anchor set to its state (an older copy put back by hand).
            if force {
                var accepting = location
                accepting.acceptsStoreAsItIs = true
                _ = try accepting.openExisting(console, orFail: CommandFailure(.notFound, "the store \(location.path) went away; run init again"))
            }
            var sealed = false
            if let sealWith {
                // Opened first: only the key file that opens this store is sealed in its place.
                _ = try location.openExisting(console, orFail: CommandFailure(.notFound, "the store \(location.path) went away; run init again"))
                sealed = try StoreFile.sealKeyFile(at: location.keyFileURL, with: sealWith.seal)
            }
            report(location, protection: existing, created: false, sealedNow: sealed, console)
            return
        }

        let key: StoreKey
        if passphrase {
            key = .passphrase(try console.readNewPassphrase(from: "CREDSTORE_PASSPHRASE", prompt: "New passphrase for \(location.path): "))
        } else {
            key = .keyFile(location.keyFileURL)
            if let sealWith {
                // A key file already there (kept from an earlier store, or made by hand) is sealed
                // as it is; otherwise a new key is made sealed, never written in the clear.
                if FileManager.default.fileExists(atPath: location.keyFileURL.path) {
                    try StoreFile.sealKeyFile(at: location.keyFileURL, with: sealWith.seal)
                } else {
                    try StoreFile.createSealedKeyFile(at: location.keyFileURL, sealedWith: sealWith.seal)
                }
            }
        }
        do {
            _ = try CredentialStorage(at: location.databaseURL, key: key, logger: StoreAccess.logger(console))
        } catch let error as CredentialStorageError where error.code == .wrongKey {
            // Another process created a store of the other kind here first.
            if let existing = try? StoreFile.protection(ofStoreAt: location.databaseURL), existing != wanted {
                throw Self.otherKind(existing, at: location)
            }
            throw error
        }
        report(location, protection: wanted, created: true, sealedNow: false, console)
    }

    /// The failure of an init that asks for one kind of store where one of the other kind is.
    private static func otherKind(_ existing: StoreProtection, at location: StoreAccess) -> CommandFailure {
        CommandFailure(.usage, existing == .passphrase
            ? "a passphrase store already exists at \(location.path); add --passphrase, or choose another --store for a key-file store"
            : "a key-file store already exists at \(location.path); choose another --store for a passphrase store")
    }

    private func report(_ location: StoreAccess, protection: StoreProtection, created: Bool, sealedNow: Bool, _ console: Console) {
        let keyFile = protection == .keyFile ? location.keyFileURL.path : nil
        let seal = keyFile.flatMap { StoreFile.keyFileSeal(at: URL(fileURLWithPath: $0)) }
        if global.json {
            console.output.write(JSONValue.object([
                ("store", .string(location.path)),
                ("protection", .string(protection.rawValue)),
                ("keyFile", .string(keyFile)),
                ("sealedWith", .string(seal?.rawValue)),
                ("created", .bool(created)),
            ]).rendered + "\n")
            return
        }
        var kind = keyFile.map { "unlocked by the key file \($0)" } ?? "locked with a passphrase"
        if let seal { kind += ", sealed to this machine by \(seal.rawValue)" }
        let what = created ? "Created \(location.path)" : sealedNow ? "Sealed the key file of \(location.path)" : "\(location.path) already exists"
        console.output.write("\(what), \(kind)\n")
    }
}
