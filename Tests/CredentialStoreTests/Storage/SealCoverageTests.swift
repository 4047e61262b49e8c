import Foundation
import GRDB
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// Every table of the schema is either under the table seal or listed, with the reason, as
/// outside it (`WritePipeline.schemaCoverage`); and for every row of every table, deleting it,
/// editing any of its columns, or putting back its copy from before a later write is either
/// detected (`verify()` reports it, or the store does not open) or changes no answer the store
/// gives: no credential, default, trusted device, device identity, sync export or merge outcome.
@Suite(.cheapKeyDerivation) struct SealCoverageTests {
    // MARK: The schema

    /// The tables of a store made now, as SQLite lists them, with their columns.
    private func liveSchema() throws -> [String: Set<String>] {
        let store = try TemporaryStore()
        _ = try store.open()
        return try store.rawDatabase().read { db in
            var tables: [String: Set<String>] = [:]
            for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'") {
                tables[name] = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(\(name))").map { $0["name"] as String })
            }
            return tables
        }
    }

    @Test func everyTableIsSealedOrListedAsOutsideWithItsReason() throws {
        let schema = try liveSchema()
        let coverage = WritePipeline.schemaCoverage
        for table in schema.keys.sorted() {
            guard let entry = coverage[table] else {
                Issue.record("table \(table) is neither sealed nor listed as outside the seal: add it to WritePipeline.schemaCoverage")
                continue
            }
            switch entry {
            case .sealed(_, let columns):
                #expect(columns == schema[table], "\(table): the columns the seal accounts for are not the table's columns")
            case .outside(let reason):
                #expect(reason.count > 40, "\(table): say why it is outside the seal")
            }
        }
        for table in coverage.keys where schema[table] == nil {
            Issue.record("WritePipeline.schemaCoverage lists \(table), which the schema does not have")
        }
        // Each sealed kind of row is one table, and every one is in the seal's full check.
        let sealedKinds = coverage.values.compactMap { entry -> SealedRowFingerprint.Table? in
            if case .sealed(let kind, _) = entry { return kind }
            return nil
        }
        #expect(sealedKinds.sorted { $0.rawValue < $1.rawValue } == SealedRowFingerprint.Table.allCases)
    }

    @Test func everyTableThatDecidesAnAnswerAMergeOrATrustIsSealed() {
        // Named here, apart from the list, so that moving one of them out of the seal is a
        // visible change to this test.
        for table in ["credentials", "default_choices", "trusted_devices", "sync_items", "sync_defaults", "device_identity", "sync_clock"] {
            guard case .sealed = WritePipeline.schemaCoverage[table] else {
                Issue.record("\(table) decides answers, merges or trust and must be sealed")
                continue
            }
        }
    }

    // MARK: Every row of every table

    /// The answers the store gives, as a user or another machine sees them.
    struct Answers: Equatable, CustomStringConvertible {
        var credentials: [String]
        /// What searches by label and attribute find (through the tag rows).
        var searched: [String]
        var defaults: [String]
        var trusted: [String]
        var device: String
        var exported: [String]
        var clock: [Int64]
        var replay: String
        var afterReplay: [String]
        /// The kept versions (of the one credential that lost a concurrent edit).
        var kept: [String]

        var description: String {
            "credentials \(credentials) searched \(searched) defaults \(defaults) trusted \(trusted.count) exported \(exported) clock \(clock) replay \(replay) → \(afterReplay) kept \(kept)"
        }
    }

    /// One trial's store: a fixed scenario written through the library, kept as the bytes of its
    /// file (and its rollback anchor), so that each edit starts from the same store.
    final class Scenario {
        let store: TemporaryStore
        let peer: SyncPeer
        let spaces = [Fixture.space(realm: "Perm"), Fixture.space("sync.example.com"), Fixture.space("gone.example.com")]
        /// A bundle the peer made before the later writes: what an attacker replays.
        let replay: URL
        /// Each table's rows before the later writes.
        let older: [String: [Row]]
        let database: Data
        let keyFile: Data
        let anchors: [String: Data]

        init(rekey: Bool) throws {
            let store = try TemporaryStore()
            let peer = try SyncPeer()
            (self.store, self.peer) = (store, peer)
            let (perm, synced, gone) = (spaces[0], spaces[1], spaces[2])
            let other = try TemporaryStore().open()
            do {
                let storage = try store.open()
                try storage.set(Credential(user: "alice", password: "a1", label: "work", attributes: ["env": "prod"]), for: perm)
                try storage.set(Fixture.credential("bob", "b1"), for: perm)
                try storage.setDefaultCredential(Fixture.credential("bob", "b1"), for: perm)
                try storage.set(Credential(user: "carol", password: "c1", persistence: .synchronizable, label: "shared"), for: synced)
                try storage.set(Fixture.credential("dave", "d1", .synchronizable), for: synced)
                try storage.setDefaultCredential(Fixture.credential("dave", "d1", .synchronizable), for: synced)
                try storage.set(Fixture.credential("erin", "e1", .synchronizable), for: gone)
                try storage.set(Fixture.credential("frank", "f1", .synchronizable), for: gone)
                try storage.sync.trust(try peer.publicKey)
                try peer.storage.sync.trust(try storage.sync.deviceKey)
                let first = peer.file("first.csbundle")
                try storage.sync.export(to: first, protection: .recipients([try peer.publicKey]))
                try peer.storage.sync.importBundle(from: first)
                let replay = peer.file("replay.csbundle")
                try peer.storage.sync.export(to: replay, protection: .recipients([try storage.sync.deviceKey]))
                self.replay = replay
            }
            store.waitUntilClosed()
            older = try Self.rows(try store.rawDatabase())
            do {
                let storage = try store.open()
                usleep(5_000)
                try storage.set(Fixture.credential("carol", "c2", .synchronizable), for: synced)
                try storage.set(Credential(user: "alice", password: "a2", label: "home"), for: perm)
                try storage.setDefaultCredential(Credential(user: "alice", password: "a2", label: "home"), for: perm)
                _ = try storage.remove(user: "erin", for: gone, options: .removeSynchronizable)
                try storage.setDefaultCredential(Fixture.credential("carol", "c2", .synchronizable), for: synced)
                try storage.sync.trust(try other.sync.deviceKey)
                // A concurrent edit that this store loses: its version is kept (kept_versions).
                try storage.set(Fixture.credential("grace", "g-here", .synchronizable), for: synced)
                usleep(5_000)
                try peer.storage.set(Fixture.credential("grace", "g-peer", .synchronizable), for: synced)
                let conflict = peer.file("conflict.csbundle")
                try peer.storage.sync.export(to: conflict, protection: .recipients([try storage.sync.deviceKey]))
                try storage.sync.importBundle(from: conflict)
                if rekey { try storage.maintenance.rekey() }
            }
            store.waitUntilClosed()
            database = try Data(contentsOf: store.databaseURL)
            keyFile = try Data(contentsOf: store.keyFileURL)
            var anchors: [String: Data] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: store.anchorDirectory.path) {
                anchors[name] = try Data(contentsOf: store.anchorDirectory.appendingPathComponent(name))
            }
            self.anchors = anchors
        }

        static func rows(_ queue: DatabaseQueue) throws -> [String: [Row]] {
            try queue.read { db in
                var result: [String: [Row]] = [:]
                for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'") {
                    result[name] = try Row.fetchAll(db, sql: "SELECT * FROM \(name)")
                }
                return result
            }
        }

        /// Puts the store (and its anchor) back as the scenario left it.
        func reset() throws {
            store.waitUntilClosed()
            for name in try FileManager.default.contentsOfDirectory(atPath: store.directory.path) {
                try FileManager.default.removeItem(at: store.directory.appendingPathComponent(name))
            }
            try database.write(to: store.databaseURL)
            try keyFile.write(to: store.keyFileURL)
            for url in [store.databaseURL, store.keyFileURL] {
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
            }
            for (name, data) in anchors { try data.write(to: store.anchorDirectory.appendingPathComponent(name)) }
        }

        /// The store's answers; throws when a read refuses the store.
        func answers(_ storage: CredentialStorage) throws -> Answers {
            func render(_ all: [ProtectionSpace: [String: Credential]]) -> [String] {
                all.flatMap { space, users in users.values.map { "\(space.host)/\($0.user)=\($0.password) \($0.persistence)" } }.sorted()
            }
            let credentials = render(try storage.allCredentials())
            let searched = try [CredentialQuery(label: "home"), CredentialQuery(label: "work"), CredentialQuery(label: "shared"),
                                CredentialQuery(attributes: ["env": "prod"])].map { query in
                try storage.entries(matching: query).map { "\($0.space.host)/\($0.user)" }.joined(separator: ",")
            }
            let defaults = try spaces.map { "\($0.host): \(try storage.defaultCredential(for: $0)?.user ?? "-")" }
            let trusted = try storage.sync.trustedDevices().map(\.key.description)
            let device = try storage.sync.deviceKey.description + (try storage.sync.deviceID)
            let bundle = store.directory.deletingLastPathComponent().appendingPathComponent("self-\(UUID().uuidString).csbundle")
            defer { try? FileManager.default.removeItem(at: bundle) }
            try storage.sync.export(to: bundle, protection: .recipients([try storage.sync.deviceKey]))
            let contents = try BundleFormat.read([UInt8](try Data(contentsOf: bundle)), passphrase: nil, device: try storage.deviceIdentity())
            let exported = contents.items.map { "\($0.space.host)/\($0.user)@\($0.stamp.wall).\($0.stamp.counter)=\($0.password ?? "deleted")" }.sorted()
                + contents.defaults.map { "default \($0.space.host)=\($0.user ?? "-")@\($0.stamp.wall).\($0.stamp.counter)" }.sorted()
            let clock = try storage.repository.read { try $0.syncClock() }.map { [$0.wall, $0.counter] } ?? []
            let kept = try storage.sync.keptVersions(of: "grace", in: spaces[1]).map { "\($0.credential.password) \($0.written) \($0.replaced)" }
            let report = try storage.sync.importBundle(from: replay)
            return Answers(
                credentials: credentials, searched: searched, defaults: defaults, trusted: trusted, device: device, exported: exported, clock: clock,
                replay: "\(report)", afterReplay: render(try storage.allCredentials()), kept: kept)
        }

        enum Outcome: Equatable {
            /// Refused by `verify()` (or by opening it for verification).
            case detected(String)
            /// Refused when read, but `verify()` found nothing.
            case detectedOnlyWhenRead(String)
            case harmless
            case changed(Answers)
        }

        /// Opens the store as an application does, and as `credstore verify` does.
        func outcome(baseline: Answers) -> Outcome {
            var detection: String?
            do {
                let diagnosed = try store.open(integrityCheck: .deferredToVerify)
                let report = try diagnosed.maintenance.verify()
                if !report.isSound { detection = "verify: \(report.problems.joined(separator: "; "))" }
            } catch {
                detection = "verify's open: \(error)"
            }
            do {
                let answers = try answers(try store.open())
                if answers == baseline { return .harmless }
                // The one outcome never allowed: the store opens and answers differently.
                return .changed(answers)
            } catch {
                return detection.map(Outcome.detected) ?? .detectedOnlyWhenRead("\(error)")
            }
        }
    }

    enum Edit: CustomStringConvertible {
        case delete(table: String, row: Row)
        case change(table: String, row: Row, column: String, to: DatabaseValue)
        case restore(table: String, row: Row)

        var description: String {
            switch self {
            case .delete(let table, let row): "delete \(table) \(row)"
            case .change(let table, let row, let column, let value): "edit \(table).\(column) of \(row) to \(value)"
            case .restore(let table, let row): "restore older \(table) \(row)"
            }
        }

        var table: String {
            switch self {
            case .delete(let table, _), .change(let table, _, _, _), .restore(let table, _): table
            }
        }

        /// Applies the edit with plain SQL, as someone without the key can; false when SQLite
        /// itself refuses it (a CHECK or key constraint), which leaves the store as it was.
        func apply(to queue: DatabaseQueue) throws -> Bool {
            func match(_ row: Row) -> (String, [DatabaseValue]) {
                (row.columnNames.map { "\($0) IS ?" }.joined(separator: " AND "), row.columnNames.map { row[$0] as DatabaseValue })
            }
            do {
                try queue.write { db in
                    switch self {
                    case .delete(let table, let row):
                        let (condition, values) = match(row)
                        try db.execute(sql: "DELETE FROM \(table) WHERE \(condition)", arguments: StatementArguments(values))
                    case .change(let table, let row, let column, let value):
                        let (condition, values) = match(row)
                        try db.execute(sql: "UPDATE \(table) SET \(column) = ? WHERE \(condition)", arguments: StatementArguments([value] + values))
                    case .restore(let table, let row):
                        let columns = Array(row.columnNames)
                        try db.execute(
                            sql: "INSERT OR REPLACE INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))",
                            arguments: StatementArguments(columns.map { row[$0] as DatabaseValue }))
                    }
                }
                return true
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                return false
            }
        }
    }

    /// Another value for a column, of the same type: a blob with one bit flipped in its last
    /// byte (a tag, or the end of a blind index), an integer plus one, a text with a letter more.
    static func edited(_ value: DatabaseValue) -> DatabaseValue? {
        switch value.storage {
        case .blob(let data) where !data.isEmpty:
            var bytes = [UInt8](data)
            bytes[bytes.count - 1] ^= 0x01
            return Data(bytes).databaseValue
        case .int64(let integer): return (integer &+ 1).databaseValue
        case .string(let text): return (text + "x").databaseValue
        default: return nil
        }
    }

    @Test(arguments: [false, true])
    func deletingEditingOrRestoringAnyRowOfAnyTableIsDetectedOrChangesNoAnswer(rekeyedInBetween: Bool) throws {
        let scenario = try Scenario(rekey: rekeyedInBetween)
        let current = try Scenario.rows(try scenario.store.rawDatabase())
        #expect(Set(current.keys) == Set(WritePipeline.schemaCoverage.keys))
        #expect(current["kept_versions"]?.count == 1, "the scenario keeps the version that lost its concurrent edit")
        try scenario.reset()
        let baseline = try scenario.answers(try scenario.store.open())
        #expect(baseline.replay == "\(ImportReport(unchanged: 4))", "the replayed bundle is older than everything here")

        var edits: [Edit] = []
        for (table, rows) in current.sorted(by: { $0.key < $1.key }) {
            for row in rows {
                edits.append(.delete(table: table, row: row))
                for column in row.columnNames {
                    if let value = Self.edited(row[column]) { edits.append(.change(table: table, row: row, column: column, to: value)) }
                }
            }
            for old in scenario.older[table] ?? [] where !rows.contains(old) {
                edits.append(.restore(table: table, row: old))
            }
        }
        var tally: [String: (detected: Int, harmless: Int, refusedBySQLite: Int)] = [:]
        for edit in edits {
            try scenario.reset()
            guard try edit.apply(to: try scenario.store.rawDatabase()) else {
                tally[edit.table, default: (0, 0, 0)].refusedBySQLite += 1
                continue
            }
            switch scenario.outcome(baseline: baseline) {
            case .detected:
                tally[edit.table, default: (0, 0, 0)].detected += 1
            case .detectedOnlyWhenRead(let error):
                Issue.record("\(edit): refused when read (\(error)), but verify() reports nothing")
            case .harmless:
                tally[edit.table, default: (0, 0, 0)].harmless += 1
                // Rows that decide answers must never be taken away or rolled back unnoticed.
                if case .sealed = WritePipeline.schemaCoverage[edit.table] {
                    Issue.record("\(edit): not detected in a sealed table")
                }
            case .changed(let answers):
                Issue.record("\(edit): the store opened and answered differently, unnoticed:\n  was \(baseline)\n  now \(answers)")
            }
        }
        // Every table was tried.
        for table in current.keys where !(current[table] ?? []).isEmpty {
            #expect(tally[table] != nil, "\(table) was not tried")
        }
        for (table, counts) in tally.sorted(by: { $0.key < $1.key }) {
            print("\(rekeyedInBetween ? "rekeyed" : "same keys"): \(table): \(counts.detected) detected, \(counts.harmless) harmless, \(counts.refusedBySQLite) refused by SQLite")
        }
    }
}
