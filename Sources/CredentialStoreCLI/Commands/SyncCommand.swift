import ArgumentParser
import CredentialStore
import Foundation

/// `credstore sync DIR`: exchanges bundles with every trusted device through a shared folder.
struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Merge the other devices' bundles from a shared folder, then write this store's.",
        discussion: """
            DIR is a folder that some file-sync engine (git, Syncthing, rsync, a mounted bucket) \
            carries between machines. Every `*.csbundle` in it from a device this store trusts is \
            merged; bundles for other devices, or from devices not trusted here, are skipped with a \
            note. Then this store writes DIR/<device id>.csbundle, sealed to every trusted device and \
            itself. Run it on each machine, in any order: the stores converge.
            """)

    @Argument(help: ArgumentHelp("The shared folder.", valueName: "dir"), completion: .directory)
    var directory: String

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let console = Console.current
        let storage = try global.location(in: console).openOrCreate(console)
        let folder = URL(fileURLWithPath: directory, isDirectory: true)
        let ownName = "\(try storage.deviceID).csbundle"
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
                .filter { $0.hasSuffix(".csbundle") && $0 != ownName }.sorted()
        } catch {
            throw CommandFailure(.ioError, "cannot read the folder \(directory); check that it exists")
        }

        var total = ImportReport()
        var merged: [(name: String, report: ImportReport)] = []
        for name in names {
            do {
                let report = try storage.importBundle(from: folder.appendingPathComponent(name))
                total.added += report.added
                total.updated += report.updated
                total.removed += report.removed
                total.unchanged += report.unchanged
                merged.append((name, report))
            } catch let error as CredentialStorageError where error.code == .bundleNotForThisStore {
                console.errors.write("credstore: skipped \(name): \(error.message)\n")
            }
        }

        let recipients = try storage.trustedDevices() + [try storage.devicePublicKey]
        try storage.exportSynchronizable(to: folder.appendingPathComponent(ownName), protection: .recipients(recipients))

        if global.json {
            console.output.write(JSONValue.object([
                ("imported", .object(merged.map { ($0.name, ImportCommand.json($0.report)) })),
                ("total", ImportCommand.json(total)), ("wrote", .string(ownName)),
            ]).rendered + "\n")
        } else {
            console.output.write("Merged \(merged.count) of \(names.count) bundles: \(total.added) added, \(total.updated) updated, \(total.removed) removed, \(total.unchanged) unchanged\nWrote \(ownName)\n")
        }
    }
}
