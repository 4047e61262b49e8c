import ArgumentParser
import CredentialStore
import Foundation
import CredentialStoreFormats
#if canImport(Glibc)
import Glibc
#endif

/// `credstore import FILE`: merges a bundle into the store; with `--from FORMAT`, brings in the
/// credentials of another store's file.
///
/// One command for both, since both bring credentials into this store from a file; `--from`
/// names a foreign format, and without it the file is credstore's own bundle, as before.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        _superCommandName: CredstoreCommand.name,
        abstract: "Merge a bundle into the store, or bring in another store's file (--from).",
        discussion: """
            A passphrase bundle takes its passphrase from CREDSTORE_BUNDLE_PASSPHRASE or a prompt; \
            a recipient bundle needs none, but must be signed by a device this store trusts \
            (`credstore device trust`). A damaged, altered, truncated or foreign bundle is refused \
            and the store is left unchanged. --dry-run reports what would change and changes nothing.

            With --from, FILE is another store's: git-credentials (git-credential-store's \
            ~/.git-credentials), keepassxc, bitwarden or chrome (the CSV each exports; Chromium, \
            Edge and Brave write Chrome's). Each login's URL gives the space (scheme, host, port; \
            no realm; a git-credentials path gives the realm "git:PATH", as the git helper stores \
            it). Rows without an http(s) URL, user or password, Bitwarden items that are not \
            logins, repeated rows and rows whose user the store holds with another password \
            (unless --overwrite) are skipped and listed with the reason. All credentials are \
            written in one transaction: a malformed file writes nothing. Delete the file \
            afterwards: it holds your passwords in plain text. See docs/cli.md (with the .deb, \
            /usr/share/doc/credstore/cli.md) for the columns.
            """)

    @Argument(help: ArgumentHelp("The bundle file to merge, or with --from the other store's file.", valueName: "file"), completion: .file())
    var file: String

    @Option(name: .customLong("from"), help: ArgumentHelp("Read FILE as another store's: git-credentials, keepassxc, bitwarden or chrome.", valueName: "format"))
    var format: ImportFormat?

    @Flag(help: "Report what would change, and change nothing.")
    var dryRun = false

    @Flag(help: "With --from: replace the password the store holds for a site and user when the file has another.")
    var overwrite = false

    @Option(help: "With --from: the tier of the imported credentials (permanent or synchronizable); new ones are permanent, replaced ones keep their tier.")
    var persistence: PersistenceName?

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if format == nil, overwrite || persistence != nil {
            throw ValidationError("--overwrite and --persistence go with --from FORMAT; a bundle's credentials keep the tiers they have")
        }
    }

    func run() throws {
        let console = Console.current
        if let format {
            try ForeignImport.run(file: file, format: format, persistence: persistence?.persistence,
                                  overwrite: overwrite, dryRun: dryRun, global: global, console: console)
            return
        }
        let storage = try global.location(in: console).openOrCreate(console)
        let report = try Self.merge(URL(fileURLWithPath: file), into: storage, dryRun: dryRun, console: console)
        for note in SyncReportNotes.lines(report, bundle: nil, thisDevice: try storage.sync.deviceKey) { console.errors.write(note) }
        for conflict in report.conflicts { console.errors.write(HistoryCommand.conflictNote(conflict)) }
        console.output.write(global.json ? Self.json(report).rendered + "\n" : Self.text(report, dryRun: dryRun))
    }

    /// Imports, asking for a passphrase only when the bundle turns out to need one, with a
    /// progress line on stderr for large bundles when stderr is a terminal.
    static func merge(_ url: URL, into storage: CredentialStorage, dryRun: Bool, console: Console) throws -> ImportReport {
        let passphrase = console.variable("CREDSTORE_BUNDLE_PASSPHRASE")
        let progress = isatty(STDERR_FILENO) == 1 ? Self.progressLine(console) : nil
        defer { if progress != nil { console.errors.write("\r\u{1B}[K") } }
        do {
            return try storage.sync.importBundle(from: url, passphrase: passphrase, dryRun: dryRun, progress: progress)
        } catch let error as CredentialStorageError where error.code == .wrongKey && passphrase == nil {
            // The bundle needs a passphrase and none was given. It unlocks something that exists,
            // so it is a key, like a store's: missing, empty or wrong, the status is 77
            // (docs/cli.md, "Exit statuses").
            guard console.secrets.isTerminal else {
                throw CommandFailure(.noPermission, "the bundle \(url.path) is locked with a passphrase; set CREDSTORE_BUNDLE_PASSPHRASE, or run the import on a terminal to be asked for it")
            }
            guard let typed = try console.secrets.readSecret(prompt: "Passphrase of the bundle: "), !typed.isEmpty else {
                throw CommandFailure(.noPermission, "no passphrase was given; the bundle \(url.path) stays locked and nothing was imported")
            }
            return try storage.sync.importBundle(from: url, passphrase: typed, dryRun: dryRun, progress: progress)
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
            ("conflicts", HistoryCommand.conflictsJSON(report.conflicts)),
        ] + SyncReportNotes.jsonFields(report))
    }

    static func text(_ report: ImportReport, dryRun: Bool) -> String {
        "\(dryRun ? "Would change" : "Imported"): \(report.added) added, \(report.updated) updated, \(report.removed) removed, \(report.unchanged) unchanged\n"
    }
}
