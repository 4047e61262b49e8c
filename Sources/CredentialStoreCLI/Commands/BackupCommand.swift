import ArgumentParser
import CredentialStore
import Foundation
#if canImport(Glibc)
// `struct stat` is CoreFoundation's declaration once swift-nio's modules are in the build.
import CoreFoundation
import Glibc
#endif

/// `credstore backup FILE`: writes a consistent, encrypted copy of the whole store.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        _superCommandName: CredstoreCommand.name,
        abstract: "Write an encrypted copy of the whole store to a file.",
        discussion: """
            The copy holds everything the store keeps on disk: permanent and synchronizable \
            credentials with their details, TLS identities and pins, default choices, the device \
            identity, trusted devices and sync state, as of one moment, taken while other \
            processes go on using the store. It is itself a store, every field encrypted, locked \
            with a passphrase from CREDSTORE_BACKUP_PASSPHRASE or typed twice at a prompt: it \
            needs no key file. The file is written 0600 under a temporary name and renamed into \
            place. `credstore restore FILE` puts it back.
            """)

    @Argument(help: ArgumentHelp("The backup file to write (0600, replaced atomically).", valueName: "file"), completion: .file())
    var file: String

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let console = Console.current
        let location = global.location(in: console)
        let target = URL(fileURLWithPath: file, isDirectory: false)
        // Renamed over the key file, the backup would lock the store out (the library refuses the
        // store's own database files; the key file is the command line's to name).
        if Self.sameFile(target, location.keyFileURL) {
            throw CommandFailure(.dataError, "\(Describe.cell(file)) is the store's key file; write the backup elsewhere. Nothing was written")
        }
        // It only reads the store: a mistyped --store must not create one and back up nothing.
        let storage = try location.openExisting(console, orFail: CommandFailure(.notFound,
            "there is no store at \(location.path); check --store. Nothing was written"))
        let passphrase = try console.readNewPassphrase(from: "CREDSTORE_BACKUP_PASSPHRASE", prompt: "Passphrase for the backup: ")
        try storage.maintenance.backup(to: target, passphrase: passphrase)
        if global.json {
            console.output.write(JSONValue.object([("store", .string(location.path)), ("file", .string(file))]).rendered + "\n")
        } else {
            console.output.write("Backed up \(location.path) to \(Describe.cell(file))\n")
        }
    }

    /// Whether `first` and `second` name the same existing file.
    static func sameFile(_ first: URL, _ second: URL) -> Bool {
        var one = stat()
        var other = stat()
        return lstat(first.path, &one) == 0 && lstat(second.path, &other) == 0 && one.st_dev == other.st_dev && one.st_ino == other.st_ino
    }
}
