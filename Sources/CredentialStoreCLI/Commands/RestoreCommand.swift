import ArgumentParser
import CredentialStore
import Foundation

/// `credstore restore FILE`: puts a backup back in place of the store, on purpose.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        _superCommandName: CredstoreCommand.name,
        abstract: "Put a backup that `credstore backup` wrote back in place of the store.",
        discussion: """
            The backup's passphrase comes from CREDSTORE_BACKUP_PASSPHRASE or a prompt. The backup \
            is checked as `credstore verify` checks a store; a damaged or altered one is refused \
            and nothing changes. Before it replaces a store, restore says what is older in the \
            backup than in that store (credentials changed, added or removed since) and asks for \
            confirmation on a terminal; --yes confirms without one. The restored store is \
            unlocked by the key file (created when missing), or, for a passphrase store or with \
            --passphrase, by a passphrase from CREDSTORE_PASSPHRASE or typed twice. It is then \
            this path's store: the rollback guard accepts its older state. Stop the processes \
            that have the store open (a `watch`, an application) first.
            """)

    @Argument(help: ArgumentHelp("The backup file to put back.", valueName: "file"), completion: .file())
    var file: String

    @Flag(help: "Lock the restored store with a passphrase rather than a key file.")
    var passphrase = false

    @Flag(help: "Restore without asking for confirmation.")
    var yes = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if passphrase, global.keyFile != nil {
            throw ValidationError("--passphrase and --key-file exclude each other: a passphrase store has no key file")
        }
    }

    func run() throws {
        let console = Console.current
        let location = global.location(in: console)
        let backup = URL(fileURLWithPath: file, isDirectory: false)
        // Before any passphrase is asked for: the library refuses it too, but only once it has one.
        if BackupCommand.sameFile(backup, location.databaseURL) {
            throw CommandFailure(.dataError, "\(Describe.cell(file)) is the store a restore would replace; restore it into another --store. Nothing was restored")
        }
        let backupPassphrase = try Self.backupPassphrase(of: backup, console)
        // A passphrase store stays one; its passphrase is what unlocks the restored store.
        let existing = location.storeExists ? try? StoreFile.protection(ofStoreAt: location.databaseURL) : nil
        let key: StoreKey = passphrase || existing == .passphrase
            ? .passphrase(try console.readNewPassphrase(from: "CREDSTORE_PASSPHRASE", prompt: "Passphrase for the restored store \(location.path): "))
            : .keyFile(location.keyFileURL)

        let report = try StoreFile.restore(
            from: backup, passphrase: backupPassphrase, to: location.databaseURL, key: key, logger: StoreAccess.logger(console)
        ) { report in
            try askToConfirm(report, location: location, console)
        }
        if global.json {
            console.output.write(Self.json(report, location: location, file: file, key: key).rendered + "\n")
        } else {
            console.output.write("Restored \(location.path) from \(Describe.cell(file)): \(Self.summary(report, location: location, done: true))\n")
        }
    }

    /// The backup's passphrase: `CREDSTORE_BACKUP_PASSPHRASE`, else asked once on a terminal. It
    /// unlocks something that exists, so missing it is a key problem (77), as for a store.
    private static func backupPassphrase(of backup: URL, _ console: Console) throws -> String {
        if let passphrase = console.variable("CREDSTORE_BACKUP_PASSPHRASE") { return passphrase }
        guard console.secrets.isTerminal else {
            throw CommandFailure(.noPermission, "the backup \(Describe.cell(backup.path)) is locked with a passphrase; set CREDSTORE_BACKUP_PASSPHRASE, or run the restore on a terminal to be asked for it. Nothing was restored")
        }
        guard let typed = try console.secrets.readSecret(prompt: "Passphrase of the backup: "), !typed.isEmpty else {
            throw CommandFailure(.noPermission, "no passphrase was given; nothing was restored")
        }
        return typed
    }

    /// Says what the restore replaces and, unless --yes, asks on the terminal; without a terminal
    /// and without --yes, refuses, saying what would have changed. Where no store is, nothing is
    /// replaced and nothing is asked.
    private func askToConfirm(_ report: RestoreReport, location: StoreAccess, _ console: Console) throws {
        guard !yes, report.replaced != .nothing else { return }
        let what = "restoring \(Describe.cell(file)) replaces the store at \(location.path): \(Self.summary(report, location: location, done: false))"
        guard console.secrets.isTerminal else {
            throw CommandFailure(.usage, "\(what). Nothing was restored; pass --yes to restore without a terminal")
        }
        console.errors.write("credstore: \(what)\nRestore it? [y/N] ")
        let answer = try console.secrets.readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
        guard answer == "y" || answer == "yes" else {
            throw CommandFailure(.notFound, "nothing was restored")
        }
    }

    /// What the restore does, in a sentence: before it (`done` false) or after.
    static func summary(_ report: RestoreReport, location: StoreAccess, done: Bool) -> String {
        let credentials = Describe.count(report.restored.count, "credential")
        switch report.replaced {
        case .nothing:
            return done ? "\(credentials), in a new store" : "there is no store there; the backup's \(credentials) make a new one"
        case .unreadable(let error):
            let reason = error.message
            return done
                ? "\(credentials); the store it replaced could not be opened (\(reason)) and was not compared"
                : "the store there could not be opened (\(reason)), so what it holds is not compared; the backup holds \(credentials)"
        case .compared:
            func tense(_ count: Int, _ singular: String, _ plural: String, _ past: String) -> String {
                done ? past : count == 1 ? singular : plural
            }
            var changes: [String] = []
            let changed = report.changedSince.count, added = report.addedSince.count, removed = report.removedSince.count
            if changed > 0 {
                changes.append("\(Describe.count(changed, "credential")) changed since the backup \(tense(changed, "goes", "go", "went")) back to \(changed == 1 ? "its older value" : "their older values")")
            }
            if added > 0 {
                changes.append("\(added) added since \(tense(added, "is", "are", added == 1 ? "was" : "were")) removed")
            }
            if removed > 0 {
                changes.append("\(removed) removed since \(tense(removed, "comes", "come", "came")) back")
            }
            if changes.isEmpty { changes.append("nothing changed since the backup") }
            return "\(credentials); " + changes.joined(separator: "; ")
        }
    }

    static func json(_ report: RestoreReport, location: StoreAccess, file: String, key: StoreKey) -> JSONValue {
        let replaced: String
        var reason: String?
        switch report.replaced {
        case .nothing: replaced = "nothing"
        case .compared: replaced = "compared"
        case .unreadable(let error): (replaced, reason) = ("unreadable", error.message)
        }
        var keyFile: String?
        if case .keyFile(let url) = key { keyFile = url.path }
        return .object([
            ("store", .string(location.path)),
            ("backup", .string(file)),
            ("protection", .string(key.protection.rawValue)),
            ("keyFile", .string(keyFile)),
            ("credentials", .number(report.restored.count)),
            ("replaced", .string(replaced)),
            ("unreadableBecause", .string(reason)),
            ("changedSince", .number(report.changedSince.count)),
            ("addedSince", .number(report.addedSince.count)),
            ("removedSince", .number(report.removedSince.count)),
        ])
    }
}
