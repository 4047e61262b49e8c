package import CredentialStore
package import CredentialStoreFormats
import Foundation

extension ForeignImport {
    /// What the import does with a row.
    package enum Action: String, Sendable {
        case add, update, unchanged, skip
    }

    /// What became of a row, without the row: what an import keeps of each entry between
    /// writing it and reporting it, so that its memory is not the file's.
    package struct Decision: Sendable {
        package var action: Action
        /// Why it was skipped or left unchanged; for one added or updated, nil (the report adds
        /// the row's note).
        package var reason: String?
    }

    /// A row's identity for finding a second entry of the same site and user: 128 bits of two
    /// differently seeded hashes, rather than the row's strings (a user name can be 4 KiB).
    private struct EntryKey: Hashable {
        var first: Int
        var second: Int

        init(space: ProtectionSpace, user: String) {
            func hash(_ seed: UInt8) -> Int {
                var hasher = Hasher()
                hasher.combine(seed)
                hasher.combine(space)
                hasher.combine(user)
                return hasher.finalize()
            }
            (first, second) = (hash(0), hash(1))
        }
    }

    /// Decides what becomes of each row `next` reads and writes the rows to import (in one
    /// transaction, unless `dryRun`); returns one decision per row, in order.
    ///
    /// - Parameter storage: the store, or nil in a dry run on a store that does not exist yet
    ///   (every credential would be added, and no store is created to find that out).
    package static func decide(
        _ next: () throws -> Row?, to storage: CredentialStorage?, persistence: Persistence?, overwrite: Bool, dryRun: Bool
    ) throws -> [Decision] {
        var decisions: [Decision] = []
        // The line and a hash of the password of the first entry of each site and user, and
        // whether it went in (not when the store keeps another password).
        var first: [EntryKey: (line: Int, password: Int, imported: Bool)] = [:]
        func decideAll(_ write: (ProtectionSpace, Credential) throws -> BatchWriteOutcome) throws {
            while let row = try next() {
                var decision = Decision(action: .skip, reason: row.skipped)
                defer { decisions.append(decision) }
                guard decision.reason == nil, let space = row.space else { continue }
                var credential = Credential(user: row.user, password: row.password)
                if let persistence { credential.persistence = persistence }
                let key = EntryKey(space: space, user: row.user)
                if row.user.isEmpty {
                    decision.reason = "it has no user name"
                } else if row.password.isEmpty {
                    decision.reason = "its password is empty"
                } else if let earlier = first[key] {
                    decision.reason = !earlier.imported
                        ? "the same site and user as line \(earlier.line), which was not imported: only the first line of a site and user is read"
                        : earlier.password == row.password.hashValue
                        ? "the same site and user as line \(earlier.line)"
                        : "the same site and user as line \(earlier.line), with another password: the first is imported; add this one with `credstore add` if it is the right one"
                } else {
                    do {
                        // The rules `set` applies, checked here so that a refused row is named and skipped.
                        try credential.validate(in: space)
                    } catch let error as CredentialStorageError {
                        decision.reason = error.message
                        continue
                    }
                    let outcome = try write(space, credential)
                    first[key] = (row.line, row.password.hashValue, outcome != .keptDifferent)
                    switch outcome {
                    case .added: decision.action = .add
                    case .updated: decision.action = .update
                    case .unchanged:
                        decision.action = .unchanged
                        decision.reason = "the store already holds this password"
                    case .keptDifferent:
                        decision.reason = "the store holds another password for this user at this site; --overwrite replaces it"
                    }
                }
            }
        }
        if let storage {
            try storage.writeBatch(replacingDifferent: overwrite, dryRun: dryRun) { write in try decideAll(write) }
        } else {
            try decideAll { _, _ in .added }
        }
        return decisions
    }

    /// Runs `credstore import FILE --from FORMAT`.
    ///
    /// The file is read four times, never held: once to check all of it before the store is
    /// opened (a malformed file changes nothing, not even by creating a store), once to write it
    /// in one transaction, and twice to report on each entry (once to see that it is still what
    /// was written and to measure the table, once to print). A file written to between the first
    /// two passes is refused before the transaction commits; one written to after the commit
    /// gets the counts, which come from the write, without the entries, and a note saying why.
    static func run(file: String, format: ImportFormat, persistence: Persistence?, overwrite: Bool, dryRun: Bool,
                    global: GlobalOptions, console: Console) throws {
        let input = try ImportFile(path: file)
        func eachRow(_ body: (Row) throws -> Void) throws {
            var reader = Reader(try input.scalars(), format: format)
            while let row = try reader.next() { try body(row) }
            try input.endPass()
        }
        try eachRow { _ in }
        let location = global.location(in: console)
        let storage = dryRun ? try location.openIfPresent(console) : try location.openOrCreate(console)
        let decisions: [Decision]
        do {
            var reader = Reader(try input.scalars(), format: format)
            decisions = try decide({
                if let row = try reader.next() { return row }
                // Inside the transaction: a file changed under the import is not half imported.
                try input.endPass()
                return nil
            }, to: storage, persistence: persistence, overwrite: overwrite, dryRun: dryRun)
        } catch CredentialStorageError.Code.synchronizableRemovalNeedsOption {
            throw CommandFailure(.usage, "\(file) replaces a synchronizable credential, which --persistence \(persistence?.rawValue ?? "") would remove on every synced machine; leave out --persistence to keep each replaced credential's tier (nothing was imported)")
        }
        let count = { (action: Action) in decisions.filter { $0.action == action }.count }
        // A pipe, /dev/stdin or a device leaves nothing to delete (and shred must not be run on it).
        let advice = dryRun || !input.isDeletable ? nil : deletionAdvice(file: file, format: format)
        /// Each row with its decision, the row's note said for one added or updated.
        func eachOutcome(_ body: (Row, Decision) throws -> Void) throws {
            var index = 0
            try eachRow { row in
                guard index < decisions.count else { return }
                var decision = decisions[index]
                index += 1
                if decision.action == .add || decision.action == .update { decision.reason = row.note }
                try body(row, decision)
            }
        }
        func cells(_ row: Row, _ decision: Decision) -> [String] {
            let result = switch decision.action {
            case .add: dryRun ? "would add" : "added"
            case .update: dryRun ? "would update" : "updated"
            case .unchanged: "unchanged"
            case .skip: "skipped"
            }
            return [String(row.line), result, row.space.map(Describe.space) ?? "", row.user, decision.reason ?? ""]
        }
        // The entries are reported from the file, read again: only once a pass has seen that it
        // is still what was written (the table is measured on the way).
        let header = ["LINE", "RESULT", "SPACE", "USER", "WHY"]
        var widths = Table.Widths(header: header)
        var entriesShown = true
        do {
            try eachOutcome { widths.measure(cells($0, $1)) }
        } catch {
            entriesShown = false
        }
        var output = BufferedOutput(console.output)
        /// Prints each entry; false when the file changed while they were printed.
        func printEntries(_ body: (Row, Decision) -> Void) -> Bool {
            do {
                try eachOutcome(body)
                return true
            } catch {
                return false
            }
        }
        if global.json {
            output.write(#"{"format":"# + JSONValue.string(format.rawValue).rendered + #","dryRun":\#(dryRun)"#
                + #","added":\#(count(.add)),"updated":\#(count(.update)),"unchanged":\#(count(.unchanged)),"skipped":\#(count(.skip))"#
                + #","entries":"#)
            if entriesShown {
                output.write("[")
                var separator = ""
                entriesShown = printEntries { row, decision in
                    output.write(separator + JSONValue.object([
                        ("line", .number(row.line)), ("action", .string(decision.action.rawValue)),
                        ("name", .string(row.name)), ("user", .string(row.user.isEmpty ? nil : row.user)),
                        ("space", row.space.map(Describe.spaceJSON) ?? .null), ("reason", .string(decision.reason)),
                    ]).rendered)
                    separator = ","
                }
                output.write("]")
            } else {
                output.write("null")
            }
            output.write(#","advice":"# + JSONValue.string(advice).rendered + "}\n")
            output.flush()
            if !entriesShown { console.errors.write(changedNote(file, dryRun: dryRun)) }
            return
        }
        if !decisions.isEmpty, entriesShown {
            output.write(widths.line(header))
            entriesShown = printEntries { output.write(widths.line(cells($0, $1))) }
        }
        // The file name is the user's, but shown on a terminal all the same: escaped like a cell.
        var report = Describe.cell("\(dryRun ? "Would import" : "Imported") from \(format.title) \(file): \(count(.add)) added, "
            + "\(count(.update)) updated, \(count(.unchanged)) unchanged, \(count(.skip)) skipped"
            + (dryRun ? " (dry run: nothing was written)" : "")) + "\n"
        if let advice { report += Describe.cell(advice) + "\n" }
        output.write(report)
        output.flush()
        if !entriesShown { console.errors.write(changedNote(file, dryRun: dryRun)) }
    }

    /// What a report says when the file changed after the import read it: the counts stand,
    /// the entries, read from the file again, would not match them.
    static func changedNote(_ file: String, dryRun: Bool) -> String {
        Describe.cell("credstore: note: \(file) changed after the import \(dryRun ? "read it" : "was written"), so its entries are not listed (or not all of them); the counts are "
            + (dryRun ? "what an import would have done" : "what was written: see `credstore list`")) + "\n"
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
