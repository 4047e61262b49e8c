import ArgumentParser
import CredentialStore
import Foundation
#if canImport(Glibc)
// `struct stat` is CoreFoundation's declaration once swift-nio's modules are in the build: the
// member-import check wants the module that declares it.
import CoreFoundation
import Glibc
#endif

/// `credstore sync DIR`: exchanges bundles with every trusted device through a shared folder.
struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        _superCommandName: CredstoreCommand.name,
        abstract: "Merge the other devices' bundles from a shared folder, then write this store's.",
        discussion: """
            DIR is a folder that some file-sync engine (git, Syncthing, rsync, a mounted bucket) \
            carries between machines. Every `*.csbundle` in it from a device this store trusts is \
            merged; bundles for other devices, from devices not trusted here, or older than 180 days \
            are skipped with a note. A file that cannot be merged (damaged, altered, a passphrase \
            bundle, not a regular file) is named on stderr and the others are still merged. Then \
            this store writes DIR/<device id>.csbundle, sealed to every trusted device and itself. \
            Exits 0 when every bundle was merged or skipped, 65 when some file was refused. Run it \
            on each machine, in any order: the stores converge. A store copied or restored onto \
            another machine or into another home first takes a device identity of its own (a note \
            names the new key to trust on the other machines). When DIR holds this store's \
            bundle as another live store with the same identity wrote it (a copy of this store), \
            nothing is merged or written and sync exits 65: `credstore device reset` gives the \
            copy its own identity.
            """)

    @Argument(help: ArgumentHelp("The shared folder.", valueName: "dir"), completion: .directory)
    var directory: String

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let console = Console.current
        let storage = try global.location(in: console).openOrCreate(console)
        let folder = URL(fileURLWithPath: directory, isDirectory: true)
        // A store copied or restored onto another machine or home takes its own identity first,
        // so that it never writes the bundle of the store it was copied from.
        if let renewal = try storage.sync.settleIdentity() {
            console.errors.write("credstore: note: \(DeviceCommand.announce(renewal))\n")
        }
        let ownName = "\(try storage.sync.deviceID).csbundle"
        let ownURL = folder.appendingPathComponent(ownName)
        // Its own bundle merged back first when the store went back since writing it (a restore):
        // the bundle may hold changes no other machine has merged yet.
        let mergedBack: ImportReport?
        do {
            mergedBack = try storage.sync.check(bundleAt: ownURL)
        } catch let error as CredentialStorageError where error.code == .deviceIdentityShared {
            throw CommandFailure(.dataError,
                "\(error.message). If this store is the copy, give it a device identity of its own with `\(DeviceCommand.resetCommand(global))`, then run `credstore sync` again")
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
                .filter { $0.hasSuffix(".csbundle") && $0 != ownName }.sorted()
        } catch {
            throw CommandFailure(.ioError, "cannot read the folder \(directory); check that it exists")
        }

        // Every revocation the folder carries first, oldest first: a revoked device's bundle must not
        // merge because it sorts before the bundle that revokes it.
        let urls = names.map { folder.appendingPathComponent($0) }.filter { url in
            var info = stat()
            return lstat(url.path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
        }
        let revocations = try storage.sync.applyRevocations(fromBundlesAt: urls)
        var total = ImportReport()
        total.revocations = revocations
        var merged: [(name: String, report: ImportReport)] = []
        var revocationNote = ImportReport()
        revocationNote.revocations = revocations
        for note in SyncReportNotes.lines(revocationNote, bundle: nil, thisDevice: try storage.sync.deviceKey) { console.errors.write(note) }
        if let mergedBack {
            total = mergedBack
            total.revocations = revocations
            console.errors.write("credstore: note: \(ownName) is this store's own bundle, written before the store went back (a backup restored, an older copy accepted): its synchronizable changes were merged back first (\(mergedBack.added) added, \(mergedBack.updated) updated, \(mergedBack.removed) removed), so that writing it again loses none\n")
        }
        // Notes: files that are not for this store, or too old to merge, are normal in a shared
        // folder. Refusals: files that are damaged, altered or not bundles at all; each is named,
        // the others are still merged and this store's bundle still written, and the exit status
        // says so (65).
        var skipped: [(name: String, why: String)] = []
        var refused: [(name: String, why: String)] = []
        // Notes on what a merged bundle's report says beyond its counts.
        var notes: [String] = []
        for name in names {
            let url = folder.appendingPathComponent(name)
            // lstat, not stat: a symbolic link (to /dev/zero, to a FIFO, to a file elsewhere) is
            // not followed, whatever it points at.
            var info = stat()
            guard lstat(url.path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                refused.append((name, "not a regular file (a symbolic link, a FIFO, a device or a folder); it was not read"))
                continue
            }
            do {
                let report = try storage.sync.importBundle(from: url)
                total.added += report.added
                total.updated += report.updated
                total.removed += report.removed
                total.unchanged += report.unchanged
                total.conflicts += report.conflicts
                merged.append((name, report))
                notes += SyncReportNotes.lines(report, bundle: name, thisDevice: try storage.sync.deviceKey)
            } catch let error as CredentialStorageError where error.code == .bundleNotForThisStore || error.code == .bundleTooOld {
                skipped.append((name, error.messageWithAdvice(command: "sync", thisDevice: try storage.sync.deviceKey, bundle: url.path)))
            } catch let error as CredentialStorageError where [.tamperDetected, .corrupt, .io, .permissionsTooOpen].contains(error.code) {
                // The store itself is at fault, not the file: stop, as every other command does.
                throw error
            } catch let error as CredentialStorageError {
                refused.append((name, error.messageWithAdvice(command: "sync")))
            }
        }
        for (name, why) in skipped { console.errors.write("credstore: skipped \(Describe.cell(name)): \(why)\n") }
        for (name, why) in refused { console.errors.write("credstore: refused \(Describe.cell(name)): \(why)\n") }
        for note in notes { console.errors.write(note) }
        for conflict in total.conflicts { console.errors.write(HistoryCommand.conflictNote(conflict)) }

        let recipients = try storage.sync.trustedDevices().map(\.key) + [try storage.sync.deviceKey]
        // Nothing new: the file stays byte for byte as it was, and a git-backed folder stays clean.
        let wrote = try storage.sync.export(to: ownURL, protection: .recipients(recipients))
        storage.sync.record(bundleAt: ownURL)

        if global.json {
            console.output.write(JSONValue.object([
                ("imported", .object(merged.map { ($0.name, ImportCommand.json($0.report)) })),
                ("total", ImportCommand.json(total)), ("wrote", .string(ownName)), ("changed", .bool(wrote)),
                ("skipped", .object(skipped.map { ($0.name, .string($0.why)) })),
                ("refused", .object(refused.map { ($0.name, .string($0.why)) })),
            ]).rendered + "\n")
        } else {
            console.output.write("Merged \(merged.count) of \(names.count) bundles: \(total.added) added, \(total.updated) updated, \(total.removed) removed, \(total.unchanged) unchanged\n\(wrote ? "Wrote" : "Left unchanged") \(ownName)\n")
        }
        if !refused.isEmpty {
            throw CommandFailure(.dataError, "\(refused.count) of \(names.count) files were refused (named above); every other bundle was merged and \(ownName) was \(wrote ? "written" : "left as it was (nothing new)")")
        }
    }
}
