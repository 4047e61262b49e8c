import ArgumentParser
import CredentialStore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `credstore export FILE`: writes the synchronizable credentials to an encrypted bundle.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
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
        try storage.exportSynchronizable(to: URL(fileURLWithPath: file), protection: protection)
        if global.json {
            console.output.write(JSONValue.object([("file", .string(file))]).rendered + "\n")
        } else {
            console.output.write("Wrote \(file)\n")
        }
    }
}

/// `credstore import FILE`: merges a bundle into the store.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Merge a bundle into the store (last writer wins per credential).",
        discussion: """
            A passphrase bundle takes its passphrase from CREDSTORE_BUNDLE_PASSPHRASE or a prompt; \
            a recipient bundle needs none, but must be signed by a device this store trusts \
            (`credstore device trust`). A damaged, altered, truncated or foreign bundle is refused \
            and the store is left unchanged. --dry-run reports what would change and changes nothing.
            """)

    @Argument(help: ArgumentHelp("The bundle file to merge.", valueName: "file"), completion: .file())
    var file: String

    @Flag(help: "Report what would change, and change nothing.")
    var dryRun = false

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let console = Console.current
        let storage = try global.location(in: console).openOrCreate(console)
        let report = try Self.merge(URL(fileURLWithPath: file), into: storage, dryRun: dryRun, console: console)
        console.output.write(global.json ? Self.json(report).rendered + "\n" : Self.text(report, dryRun: dryRun))
    }

    /// Imports, asking for a passphrase only when the bundle turns out to need one, with a
    /// progress line on stderr for large bundles when stderr is a terminal.
    static func merge(_ url: URL, into storage: CredentialStorage, dryRun: Bool, console: Console) throws -> ImportReport {
        let passphrase = console.variable("CREDSTORE_BUNDLE_PASSPHRASE")
        let progress = isatty(STDERR_FILENO) == 1 ? Self.progressLine(console) : nil
        defer { if progress != nil { console.errors.write("\r\u{1B}[K") } }
        do {
            return try storage.importBundle(from: url, passphrase: passphrase, dryRun: dryRun, progress: progress)
        } catch let error as CredentialStorageError where error.code == .invalidInput && passphrase == nil {
            // The bundle needs a passphrase and none was given. It unlocks something that exists,
            // so it is a key, like a store's: missing, empty or wrong, the status is 77
            // (docs/cli.md, "Exit statuses").
            guard console.secrets.isTerminal else {
                throw CommandFailure(.noPermission, "the bundle \(url.path) is locked with a passphrase; set CREDSTORE_BUNDLE_PASSPHRASE, or run the import on a terminal to be asked for it")
            }
            guard let typed = try console.secrets.readSecret(prompt: "Passphrase of the bundle: "), !typed.isEmpty else {
                throw CommandFailure(.noPermission, "no passphrase was given; the bundle \(url.path) stays locked and nothing was imported")
            }
            return try storage.importBundle(from: url, passphrase: typed, dryRun: dryRun, progress: progress)
        }
    }

    /// A bar redrawn in place: `importing [#########...........]  45%  45056/100000`, shown only
    /// for bundles big enough to take a moment.
    private static func progressLine(_ console: Console) -> (Int, Int) -> Void {
        { done, total in
            guard total >= 5000 else { return }
            let width = 30
            let filled = done * width / max(total, 1)
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            console.errors.write("\rimporting [\(bar)] \(done * 100 / max(total, 1))%  \(done)/\(total)")
        }
    }

    static func json(_ report: ImportReport) -> JSONValue {
        .object([
            ("added", .number(report.added)), ("updated", .number(report.updated)),
            ("removed", .number(report.removed)), ("unchanged", .number(report.unchanged)),
        ])
    }

    static func text(_ report: ImportReport, dryRun: Bool) -> String {
        "\(dryRun ? "Would change" : "Imported"): \(report.added) added, \(report.updated) updated, \(report.removed) removed, \(report.unchanged) unchanged\n"
    }
}
