import ArgumentParser
import CredentialStore
import Foundation
import CredentialStoreFormats
#if canImport(Glibc)
import Glibc
#endif

/// `credstore export FILE`: writes the synchronizable credentials to an encrypted bundle.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        _superCommandName: CredstoreCommand.name,
        abstract: "Write the synchronizable credentials to an encrypted bundle file.",
        discussion: """
            Only synchronizable credentials, their deletions and their default choices are written. \
            With --recipient (repeatable), the bundle is sealed to those devices' keys (from \
            `credstore device show` on each machine) and signed by this store's device key. \
            Without it, the bundle is protected by a passphrase from CREDSTORE_BUNDLE_PASSPHRASE, \
            or typed twice at a prompt.
            """)

    @Argument(help: ArgumentHelp("The bundle file to write (0600, replaced atomically).", valueName: "file"), completion: .file())
    var file: String

    @Option(name: .customLong("recipient"), help: ArgumentHelp("A device key (csdev1:…) that may open the bundle.", valueName: "key"))
    var recipients: [String] = []

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let console = Console.current
        // A mistyped key is refused before the store is opened, or created.
        let keys = try recipients.map(DeviceKey.init)
        // It only reads the store: a mistyped --store must not create one and export nothing.
        let location = global.location(in: console)
        let storage = try location.openExisting(console, orFail: CommandFailure(.notFound,
            "there is no store at \(location.path); check --store. Nothing was written"))
        let protection: BundleProtection = keys.isEmpty
            ? .passphrase(try console.readNewPassphrase(from: "CREDSTORE_BUNDLE_PASSPHRASE", prompt: "Passphrase for the bundle: "))
            : .recipients(keys)
        try storage.sync.export(to: URL(fileURLWithPath: file), protection: protection)
        if global.json {
            console.output.write(JSONValue.object([("file", .string(file))]).rendered + "\n")
        } else {
            console.output.write("Wrote \(Describe.cell(file))\n")
        }
    }
}
