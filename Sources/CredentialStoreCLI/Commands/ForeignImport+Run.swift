package import CredentialStore
package import CredentialStoreFormats
import Foundation

extension ForeignImport {
    /// What the import does with a row.
    package enum Action: String, Sendable {
        case add, update, unchanged, skip
    }

    /// A row with what became of it.
    package struct Outcome: Sendable {
        package var row: Row
        package var action: Action
        /// Why it was skipped or left unchanged; for one added or updated, the row's note or nil.
        package var reason: String?
    }

    /// Decides, writes (in one transaction, unless `dryRun`) and returns what became of each row.
    ///
    /// - Parameter storage: the store, or nil in a dry run on a store that does not exist yet
    ///   (every credential would be added, and no store is created to find that out).
    package static func apply(
        _ rows: [Row], to storage: CredentialStorage?, persistence: Persistence?, overwrite: Bool, dryRun: Bool
    ) throws -> [Outcome] {
        struct Key: Hashable {
            var space: ProtectionSpace
            var user: String
        }
        var outcomes: [Outcome] = []
        var first: [Key: Row] = [:]
        var items: [(space: ProtectionSpace, credential: Credential)] = []
        var itemOutcome: [Int] = []
        for row in rows {
            var outcome = Outcome(row: row, action: .skip, reason: row.skipped)
            defer { outcomes.append(outcome) }
            guard outcome.reason == nil, let space = row.space else { continue }
            var credential = Credential(user: row.user, password: row.password)
            if let persistence { credential.persistence = persistence }
            if row.user.isEmpty {
                outcome.reason = "it has no user name"
            } else if row.password.isEmpty {
                outcome.reason = "its password is empty"
            } else if let earlier = first[Key(space: space, user: row.user)] {
                outcome.reason = earlier.password == row.password
                    ? "the same site and user as line \(earlier.line)"
                    : "the same site and user as line \(earlier.line), with another password: the first is imported; add this one with `credstore add` if it is the right one"
            } else {
                do {
                    // The rules `set` applies, checked here so that a refused row is named and skipped.
                    try credential.validate(in: space)
                    first[Key(space: space, user: row.user)] = row
                    items.append((space, credential))
                    itemOutcome.append(outcomes.count)
                } catch let error as CredentialStorageError {
                    outcome.reason = error.message
                }
            }
        }
        let results = try storage?.setAll(items, replacingDifferent: overwrite, dryRun: dryRun)
            ?? Array(repeating: BatchWriteOutcome.added, count: items.count)
        for (index, result) in zip(itemOutcome, results) {
            switch result {
            case .added:
                outcomes[index].action = .add
                outcomes[index].reason = outcomes[index].row.note
            case .updated:
                outcomes[index].action = .update
                outcomes[index].reason = outcomes[index].row.note
            case .unchanged:
                outcomes[index].action = .unchanged
                outcomes[index].reason = "the store already holds this password"
            case .keptDifferent:
                outcomes[index].reason = "the store holds another password for this user at this site; --overwrite replaces it"
            }
        }
        return outcomes
    }

    /// Runs `credstore import FILE --from FORMAT`.
    static func run(file: String, format: ImportFormat, persistence: Persistence?, overwrite: Bool, dryRun: Bool,
                    global: GlobalOptions, console: Console) throws {
        let text: String
        do {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            guard let decoded = String(validating: bytes, as: UTF8.self) else {
                throw CommandFailure(.dataError, "\(file) is not UTF-8 text; export it again as UTF-8 (every manager's export is); nothing was imported")
            }
            text = decoded
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure(.ioError, "could not read \(file); check its path and permissions")
        }
        // The whole file is read and checked before the store is opened: a malformed one changes
        // nothing, not even by creating a store.
        let rows = try rows(text, format: format)
        let location = global.location(in: console)
        let storage = dryRun ? try location.openIfPresent(console) : try location.openOrCreate(console)
        let outcomes: [Outcome]
        do {
            outcomes = try apply(rows, to: storage, persistence: persistence, overwrite: overwrite, dryRun: dryRun)
        } catch CredentialStorageError.Code.synchronizableRemovalNeedsOption {
            throw CommandFailure(.usage, "\(file) replaces a synchronizable credential, which --persistence \(persistence?.rawValue ?? "") would remove on every synced machine; leave out --persistence to keep each replaced credential's tier (nothing was imported)")
        }
        let count = { (action: Action) in outcomes.filter { $0.action == action }.count }
        let advice = dryRun ? nil : deletionAdvice(file: file, format: format)
        if global.json {
            console.output.write(JSONValue.object([
                ("format", .string(format.rawValue)), ("dryRun", .bool(dryRun)),
                ("added", .number(count(.add))), ("updated", .number(count(.update))),
                ("unchanged", .number(count(.unchanged))), ("skipped", .number(count(.skip))),
                ("entries", .array(outcomes.map { outcome in
                    .object([
                        ("line", .number(outcome.row.line)), ("action", .string(outcome.action.rawValue)),
                        ("name", .string(outcome.row.name)), ("user", .string(outcome.row.user.isEmpty ? nil : outcome.row.user)),
                        ("space", outcome.row.space.map(Describe.spaceJSON) ?? .null), ("reason", .string(outcome.reason)),
                    ])
                })),
                ("advice", .string(advice)),
            ]).rendered + "\n")
            return
        }
        var table = Table(header: ["LINE", "RESULT", "SPACE", "USER", "WHY"])
        for outcome in outcomes {
            let result = switch outcome.action {
            case .add: dryRun ? "would add" : "added"
            case .update: dryRun ? "would update" : "updated"
            case .unchanged: "unchanged"
            case .skip: "skipped"
            }
            table.rows.append([String(outcome.row.line), result, outcome.row.space.map(Describe.space) ?? "",
                               outcome.row.user, outcome.reason ?? ""])
        }
        var report = outcomes.isEmpty ? "" : table.rendered
        // The file name is the user's, but shown on a terminal all the same: escaped like a cell.
        report += Describe.cell("\(dryRun ? "Would import" : "Imported") from \(format.title) \(file): \(count(.add)) added, "
            + "\(count(.update)) updated, \(count(.unchanged)) unchanged, \(count(.skip)) skipped"
            + (dryRun ? " (dry run: nothing was written)" : "")) + "\n"
        if let advice { report += Describe.cell(advice) + "\n" }
        console.output.write(report)
    }

    /// What to do with the plain-text file once its passwords are in the store.
    static func deletionAdvice(file: String, format: ImportFormat) -> String {
        // Quoted for the shell, so the advice can be pasted as it is.
        let quoted = ShellWords.quoted(file)
        var advice = "\(file) still holds your passwords in plain text: once the import looks right, delete it "
            + "with `shred -u \(quoted)` (on an SSD or a copy-on-write file system no tool reaches every old copy, "
            + "so keep such a disk encrypted)"
        if format == .gitCredentials {
            advice += ", and stop git writing it again: `git config --global --unset credential.helper store`, "
                + "then set credstore's helper (`credstore help git-credential`)"
        } else {
            advice += "; empty the trash too if the export passed through it"
        }
        return advice
    }
}
