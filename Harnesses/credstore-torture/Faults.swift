import CredentialStore
import Foundation
import SeededRandom
#if canImport(Glibc)
import Glibc
#endif

/// What the store must hold for one (space, user): a password in a tier, or nothing.
struct Expected: Equatable, CustomStringConvertible {
    var password: String?
    var persistence: Persistence?

    static let absent = Expected(password: nil, persistence: nil)

    var description: String {
        guard let password, let persistence else { return "absent" }
        return "\(password) (\(persistence.rawValue))"
    }
}

/// Acknowledged state, keyed by "host user"; only hosts ending in `.torture` are tracked.
struct Ledger {
    var entries: [String: Expected] = [:]

    static func key(_ host: String, _ user: String) -> String { "\(host) \(user)" }

    /// Applies a writer's log: `A` lines make the preceding intent certain; a trailing intent
    /// without `A` (the call in flight when the writer died) is returned as an allowed alternative.
    /// Returns (alternatives, acknowledged count, error line).
    mutating func apply(log: String) -> (inflight: [String: Expected], acknowledged: Int, error: String?) {
        var pending: (String, Expected)?
        var acknowledged = 0
        var error: String?
        for line in log.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: " ").map(String.init)
            switch fields.first {
            case "I" where fields.count >= 4 && fields[1] == "S" && fields.count >= 6:
                pending = (Self.key(fields[2], fields[3]), Expected(password: fields[5], persistence: Persistence(rawValue: fields[4])))
            case "I" where fields.count >= 4 && fields[1] == "R":
                pending = (Self.key(fields[2], fields[3]), .absent)
            case "A":
                if let (key, value) = pending { entries[key] = value; acknowledged += 1 }
                pending = nil
            case "E":
                error = String(line)
            default:
                break
            }
        }
        var inflight: [String: Expected] = [:]
        if let (key, value) = pending { inflight[key] = value }
        return (inflight, acknowledged, error)
    }
}

/// Per fault point: what happened.
struct FaultTally {
    var rounds = 0
    var kills = 0
    var finishedBeforeKill = 0
    var acknowledged = 0
    var lost = 0
    var verifyFailures = 0
    var notes: [String: Int] = [:]
}

final class FaultRun {
    let seed: UInt64
    var random: SplitMix
    let work: URL
    let credstore: URL
    let sqlite3: URL
    let bundleItems: Int
    var tallies: [String: FaultTally] = [:]
    var problems: [String] = []
    let points = ["writer", "rekey", "passwd", "import", "migration"]
    var durations: [String: Double] = [:]
    var openWindow = (0.005, 0.05)
    var round = 0

    // Store A (key file): writers and rekey.
    var ledgerA = Ledger()
    // Store P (passphrase): passwd.
    var ledgerP = Ledger()
    var passphrase: String
    var passphraseNumber = 0
    // Templates copied for each import and migration round.
    var ledgerImport = Ledger()
    var ledgerMigration = Ledger()
    var schemaSteps = 0
    let bundlePassphrase = "torture-bundle-passphrase"

    init(seed: UInt64, work: URL, credstore: URL, sqlite3: URL, bundleItems: Int) {
        self.seed = seed
        self.random = SplitMix(seed: seed)
        self.work = work
        self.credstore = credstore
        self.sqlite3 = sqlite3
        self.bundleItems = bundleItems
        passphrase = "torture-pass-\(seed)-0"
    }

    func dir(_ name: String) -> URL { work.appendingPathComponent(name) }
    func db(_ name: String) -> URL { dir(name).appendingPathComponent("credentials.db") }
    func keyFile(_ name: String) -> URL { dir(name).appendingPathComponent("store.key") }
    static let storeFiles = ["credentials.db", "credentials.db-wal", "credentials.db-shm", "store.key"]

    func problem(_ point: String, _ text: String) {
        problems.append("[\(point) round \(round)] \(text)")
        note("PROBLEM [\(point) round \(round)] \(text)")
    }

    // MARK: Set-up

    /// Each round starts again from the same template copy, which to the library is a rollback of
    /// that store to an older state: its rollback anchor (the newest generation seen) is deleted
    /// first, as the library's message says to do when a backup is restored on purpose.
    func forgetAnchor(of database: URL) {
        guard let storeID = try? sql(database, "SELECT lower(hex(store_id)) FROM store_header"), !storeID.isEmpty else { return }
        let environment = ProcessInfo.processInfo.environment
        let state = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state"
        try? FileManager.default.removeItem(atPath: "\(state)/credstore/anchors/\(storeID)")
    }

    func sql(_ database: URL, _ statement: String) throws -> String {
        let result = runToEnd(sqlite3, ["-cmd", ".timeout 10000", database.path, statement], in: work)
        guard result.status == 0 else { throw CredentialStorageError(.io, "sqlite3 failed: \(result.errors)") }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func fill(_ storage: CredentialStorage, ledger: inout Ledger, prefix: String, count: Int, persistence: Persistence) throws {
        for index in 0..<count {
            let space = ProtectionSpace(host: "\(prefix)-\(index % 10).torture", port: 443, protocol: "https", realm: nil)
            let user = "t\(index)"
            let password = "pw-\(prefix)-\(index)"
            try storage.set(Credential(user: user, password: password, persistence: persistence), for: space)
            ledger.entries[Ledger.key(space.host, user)] = Expected(password: password, persistence: persistence)
        }
    }

    func setUp() throws {
        makeDirectory(work)
        for name in ["a", "p", "import-template", "migration-template", "source"] { makeDirectory(dir(name)) }
        do {
            let storage = try CredentialStorage(at: db("a"), key: .keyFile(keyFile("a")))
            try fill(storage, ledger: &ledgerA, prefix: "seed-a", count: 40, persistence: .permanent)
        }
        schemaSteps = Int(try sql(db("a"), "SELECT count(*) FROM schema_migrations")) ?? 0
        // Store A also holds the bundle's items (imported once below), so that a rekey has
        // thousands of rows to re-seal and its transaction lasts long enough to be hit.
        note("set-up: store A ready, \(schemaSteps) schema steps")
        do {
            let storage = try CredentialStorage(at: db("p"), key: .passphrase(passphrase))
            try fill(storage, ledger: &ledgerP, prefix: "seed-p", count: 40, persistence: .permanent)
        }
        note("set-up: passphrase store P ready")
        do {
            let storage = try CredentialStorage(at: db("import-template"), key: .keyFile(keyFile("import-template")))
            try fill(storage, ledger: &ledgerImport, prefix: "seed-i", count: 50, persistence: .permanent)
        }
        do {
            let storage = try CredentialStorage(at: db("source"), key: .keyFile(keyFile("source")))
            let started = Date()
            for index in 0..<bundleItems {
                let space = ProtectionSpace(host: "b-\(index % 100).bundle", port: 443, protocol: "https", realm: nil)
                try storage.set(Credential(user: "bu\(index)", password: "bpw\(index)", persistence: .synchronizable), for: space)
            }
            try storage.sync.export(to: work.appendingPathComponent("large.csbundle"), protection: .passphrase(bundlePassphrase))
            note("set-up: bundle of \(bundleItems) items in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
        }
        do {
            let storage = try CredentialStorage(at: db("a"), key: .keyFile(keyFile("a")))
            let report = try storage.sync.importBundle(from: work.appendingPathComponent("large.csbundle"), passphrase: bundlePassphrase)
            note("set-up: \(report.added) bundle items imported into store A")
        }
        do {
            let storage = try CredentialStorage(at: db("migration-template"), key: .keyFile(keyFile("migration-template")))
            try fill(storage, ledger: &ledgerMigration, prefix: "seed-m", count: 200, persistence: .permanent)
        }
        // Back to the first schema step: drop every table later steps made, forget their identifiers.
        let template = db("migration-template")
        let keep: Set<String> = ["store_header", "key_slots", "credentials", "default_choices", "schema_migrations"]
        let tables = try sql(template, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            .split(separator: "\n").map(String.init).filter { !keep.contains($0) }
        _ = try sql(template, tables.map { "DROP TABLE \($0);" }.joined()
            + "DELETE FROM schema_migrations WHERE identifier <> (SELECT min(identifier) FROM schema_migrations);")
        let left = try sql(template, "SELECT count(*) FROM schema_migrations")
        note("set-up: migration template at 1 of \(schemaSteps) schema steps (dropped \(tables.joined(separator: ", "))); \(left) step recorded")
        guard left == "1" else { throw CredentialStorageError(.io, "the migration template did not go back to the first step") }
    }

    // MARK: Checking

    /// Compares the store with the ledger (each key the acknowledged value, or the in-flight one),
    /// then adopts what is there. Returns the number of lost or wrong entries.
    func check(_ storage: CredentialStorage, ledger: inout Ledger, inflight: [String: Expected], point: String) -> Int {
        let all: [ProtectionSpace: [String: Credential]]
        do {
            all = try storage.allCredentials()
        } catch {
            problem(point, "allCredentials() threw after the kill: \(describe(error))")
            return 1
        }
        var actual: [String: Expected] = [:]
        for (space, credentials) in all where space.host.hasSuffix(".torture") {
            for (user, credential) in credentials {
                actual[Ledger.key(space.host, user)] = Expected(password: credential.password, persistence: credential.persistence)
            }
        }
        var lost = 0
        for key in Set(ledger.entries.keys).union(inflight.keys).union(actual.keys) {
            let found = actual[key] ?? .absent
            let acknowledged = ledger.entries[key] ?? .absent
            if found != acknowledged && inflight[key] != found {
                lost += 1
                problem(point, "\(key): acknowledged \(acknowledged), in flight \(inflight[key].map { "\($0)" } ?? "none"), found \(found)")
            }
            ledger.entries[key] = found
        }
        return lost
    }

    /// How many of the bundle's items the store holds; a wrong password or tier is a problem.
    func bundleItemsPresent(_ storage: CredentialStorage, point: String) throws -> Int {
        var present = 0
        for (space, credentials) in try storage.allCredentials() where space.host.hasSuffix(".bundle") {
            for (user, credential) in credentials {
                present += 1
                if "bpw" + user.dropFirst(2) != credential.password || credential.persistence != .synchronizable {
                    problem(point, "bundle item \(space.host) \(user) reads \(credential.persistence.rawValue) with a wrong password")
                }
            }
        }
        return present
    }

    /// On store A: all the bundle's items, imported at set-up, still there.
    func checkBundleItems(_ storage: CredentialStorage, point: String) -> Int {
        do {
            let present = try bundleItemsPresent(storage, point: point)
            guard present == bundleItems else {
                problem(point, "\(present) of the \(bundleItems) imported bundle items present")
                return 1
            }
            return 0
        } catch {
            problem(point, "allCredentials() threw: \(describe(error))")
            return 1
        }
    }

    /// `credstore verify` and the library's `verify()`; returns whether both passed.
    func verify(_ storage: CredentialStorage, database: URL, keyFile: URL?, passphrase: String?, point: String) -> Bool {
        var sound = true
        do {
            let report = try storage.maintenance.verify()
            if !report.isSound {
                problem(point, "verify(): \(report.problems)")
                sound = false
            }
        } catch {
            problem(point, "verify() threw: \(describe(error))")
            sound = false
        }
        var arguments = ["verify", "--store", database.path]
        var environment: [String: String] = [:]
        if let keyFile { arguments += ["--key-file", keyFile.path] }
        if let passphrase { environment["CREDSTORE_PASSPHRASE"] = passphrase }
        let result = runToEnd(credstore, arguments, environment: environment, in: work)
        if result.status != 0 || result.signaled {
            problem(point, "credstore verify exited \(result.status): \(result.output) \(result.errors)")
            sound = false
        }
        return sound
    }

    // MARK: Rounds

    func delay(upTo duration: Double) -> Double {
        // A third spread over the whole run, a third over its second half, a third close to its
        // end, where the commit is.
        switch Int.random(in: 0..<3, using: &random) {
        case 0: return Double.random(in: 0.01...max(0.02, duration), using: &random)
        case 1: return Double.random(in: (duration * 0.5)...max(duration * 0.5 + 0.01, duration * 1.03), using: &random)
        default: return Double.random(in: (duration * 0.92)...max(duration * 0.92 + 0.005, duration * 1.01), using: &random)
        }
    }

    func startWriter(database: URL, keyFile: String, prefix: String, environment: [String: String] = [:]) -> Child {
        Child(executable: selfExecutable(), arguments: ["writer", database.path, keyFile, prefix, "\(random.next() & 0xFFFF_FFFF)"],
              environment: environment, output: dir("logs").appendingPathComponent("\(prefix).log"))
    }

    /// Kills the children, each at its own moment (seconds after now), earliest first.
    func kill(_ children: [(child: Child, at: Double, point: String)]) -> [Bool] {
        let start = Date()
        var killed = Array(repeating: false, count: children.count)
        for index in children.indices.sorted(by: { children[$0].at < children[$1].at }) {
            sleepSeconds(children[index].at - Date().timeIntervalSince(start))
            killed[index] = children[index].child.killNow()
        }
        return killed
    }

    func count(_ point: String, killed: Bool) {
        if killed { tallies[point, default: FaultTally()].kills += 1 } else { tallies[point, default: FaultTally()].finishedBeforeKill += 1 }
    }

    /// Applies a writer's log to a ledger; returns its in-flight alternative.
    func absorb(_ writer: Child, into ledger: inout Ledger, point: String, refusalExpected: Bool = false) -> [String: Expected] {
        let (inflight, acknowledged, error) = ledger.apply(log: writer.output)
        tallies["writer", default: FaultTally()].acknowledged += acknowledged
        if let error {
            if refusalExpected && error.contains("wrongKey") {
                tallies[point, default: FaultTally()].notes["writer refused: passphrase already changed", default: 0] += 1
            } else {
                problem("writer", "writer during \(point) failed: \(error)")
            }
        }
        return inflight
    }

    func writersRound() {
        let point = "writer"
        tallies[point, default: FaultTally()].rounds += 1
        let writers = (0..<3).map { startWriter(database: db("a"), keyFile: keyFile("a").path, prefix: "w\(round)x\($0)") }
        let killed = kill(writers.map { ($0, Double.random(in: 0.05...1.5, using: &random), point) })
        for flag in killed { count(point, killed: flag) }
        var inflight: [String: Expected] = [:]
        for writer in writers { inflight.merge(absorb(writer, into: &ledgerA, point: point)) { $1 } }
        checkKeyFileStore(database: db("a"), keyFile: keyFile("a"), ledger: &ledgerA, inflight: inflight, point: point) { storage in
            tallies[point, default: FaultTally()].lost += checkBundleItems(storage, point: point)
        }
    }

    /// Opens a key-file store after a kill and checks it (see ``checkOpened``); `more` adds the
    /// round's own checks. A store that does not open counts as a verify failure.
    func checkKeyFileStore(
        database: URL, keyFile: URL, ledger: inout Ledger, inflight: [String: Expected], point: String,
        more: (CredentialStorage) throws -> Void = { _ in }
    ) {
        do {
            let storage = try CredentialStorage(at: database, key: .keyFile(keyFile))
            checkOpened(storage, database: database, keyFile: keyFile, passphrase: nil, ledger: &ledger, inflight: inflight, point: point)
            try more(storage)
        } catch {
            problem(point, "the store does not open after the kill: \(describe(error))")
            tallies[point, default: FaultTally()].verifyFailures += 1
        }
    }

    /// The checks every round makes of its store once it is open again: no acknowledged write
    /// lost, and `verify` sound.
    func checkOpened(
        _ storage: CredentialStorage, database: URL, keyFile: URL?, passphrase: String?,
        ledger: inout Ledger, inflight: [String: Expected], point: String
    ) {
        tallies[point, default: FaultTally()].lost += check(storage, ledger: &ledger, inflight: inflight, point: point)
        if !verify(storage, database: database, keyFile: keyFile, passphrase: passphrase, point: point) {
            tallies[point, default: FaultTally()].verifyFailures += 1
        }
    }

    /// Runs `command` beside a writer of its own on `database` and kills both; the writer's
    /// acknowledged writes go into `ledger`. Returns whether the command was killed, and the
    /// writer's write that was in flight.
    func besideWriter(
        _ command: Child, point: String, database: URL, keyFile: String, prefix: String,
        environment: [String: String] = [:], ledger: inout Ledger, refusalExpected: Bool = false
    ) -> (killed: Bool, inflight: [String: Expected]) {
        let writer = startWriter(database: database, keyFile: keyFile, prefix: prefix, environment: environment)
        let killed = cliRound(point: point, command: command, writer: writer)
        return (killed, absorb(writer, into: &ledger, point: point, refusalExpected: refusalExpected))
    }

    /// Runs one CLI command (or child) beside a writer and kills both; returns whether the command was killed.
    func cliRound(point: String, command: Child, writer: Child) -> Bool {
        let duration = durations[point] ?? 1
        let killed = kill([(command, delay(upTo: duration), point), (writer, Double.random(in: 0.05...max(0.1, duration), using: &random), "writer")])
        count(point, killed: killed[0])
        count("writer", killed: killed[1])
        // Creep towards the command's real length (the commit is at its end): longer after a kill,
        // the measured time after a run that finished.
        if killed[0] { durations[point] = duration * 1.06 }
        if !killed[0] {
            let status = command.process.terminationStatus
            if status != 0 { problem(point, "\(point) exited \(status) before the kill: \(command.errors) \(command.output)") }
            // It finished: a better estimate of how long it takes.
            durations[point] = Date().timeIntervalSince(command.started) * 0.98
        }
        return killed[0]
    }

    /// Kills a command that runs alone on its store (no writer beside it), then reads the store's
    /// committed state on a copy to tell where the kill landed: after its commit; inside its
    /// transaction with pages already in the WAL but no commit frame; or with nothing in the WAL,
    /// which is before its transaction or inside it while SQLite still held the pages in memory.
    func loneRound(point: String, command: Child, database: URL, probe: String, before: String) -> Bool {
        let key = "\(point) alone"
        let duration = durations[key] ?? durations[point] ?? 1
        let killed = kill([(command, delay(upTo: duration), point)])[0]
        count(point, killed: killed)
        if killed { durations[key] = duration * 1.06 } else { durations[key] = Date().timeIntervalSince(command.started) * 0.98 }
        if !killed && command.process.terminationStatus != 0 {
            problem(point, "\(point) exited \(command.process.terminationStatus) before the kill: \(command.errors) \(command.output)")
        }
        let wal = database.path + "-wal"
        let walBytes = ((try? FileManager.default.attributesOfItem(atPath: wal))?[.size] as? Int) ?? 0
        let probeDir = dir("probe")
        copyStoreFiles(names: Self.storeFiles.map { $0.replacingOccurrences(of: "credentials.db", with: database.lastPathComponent) },
                       from: database.deletingLastPathComponent(), to: probeDir)
        let after = (try? sql(probeDir.appendingPathComponent(database.lastPathComponent), probe)) ?? "?"
        let landed: String
        if !killed {
            landed = after != before ? "alone, finished" : "alone, finished WITHOUT CHANGING ANYTHING"
        } else if after != before {
            landed = "alone, killed after its commit"
        } else if walBytes > 32 {
            landed = "alone, killed mid-transaction (uncommitted frames in the WAL)"
        } else {
            landed = "alone, killed with nothing in the WAL (before or during its transaction)"
        }
        tallies[point, default: FaultTally()].notes[landed, default: 0] += 1
        if !killed && after == before { problem(point, "\(point) finished but the store did not change (\(probe) = \(after))") }
        return killed
    }

    func rekeyRound() {
        let point = "rekey"
        tallies[point, default: FaultTally()].rounds += 1
        let lone = tallies[point, default: FaultTally()].rounds % 2 == 0
        let probe = "SELECT key_generation FROM store_header"
        let before = lone ? (try? sql(db("a"), probe)) ?? "?" : ""
        let command = Child(executable: credstore, arguments: ["rekey", "--store", db("a").path, "--key-file", keyFile("a").path],
                            output: dir("logs").appendingPathComponent("rekey-\(round).log"))
        var inflight: [String: Expected] = [:]
        if lone {
            _ = loneRound(point: point, command: command, database: db("a"), probe: probe, before: before)
        } else {
            inflight = besideWriter(command, point: point, database: db("a"), keyFile: keyFile("a").path, prefix: "k\(round)", ledger: &ledgerA).inflight
        }
        checkKeyFileStore(database: db("a"), keyFile: keyFile("a"), ledger: &ledgerA, inflight: inflight, point: point) { storage in
            tallies[point, default: FaultTally()].lost += checkBundleItems(storage, point: point)
        }
    }

    func passwdRound() {
        let point = "passwd"
        tallies[point, default: FaultTally()].rounds += 1
        let old = passphrase
        let new = "torture-pass-\(seed)-\(passphraseNumber + 1)"
        let lone = tallies[point, default: FaultTally()].rounds % 2 == 0
        let probe = "SELECT hex(kdf_salt) FROM key_slots WHERE kind = 'passphrase'"
        let before = lone ? (try? sql(db("p"), probe)) ?? "?" : ""
        let command = Child(executable: credstore, arguments: ["passwd", "--store", db("p").path],
                            environment: ["CREDSTORE_PASSPHRASE": old, "CREDSTORE_NEW_PASSPHRASE": new],
                            output: dir("logs").appendingPathComponent("passwd-\(round).log"))
        var inflight: [String: Expected] = [:]
        if lone {
            _ = loneRound(point: point, command: command, database: db("p"), probe: probe, before: before)
        } else {
            inflight = besideWriter(command, point: point, database: db("p"), keyFile: "-", prefix: "p\(round)",
                                    environment: ["TORTURE_PASSPHRASE": old], ledger: &ledgerP, refusalExpected: true).inflight
        }
        // Exactly one of the two passphrases opens it.
        var opened: CredentialStorage?
        for (candidate, isNew) in [(new, true), (old, false)] {
            do {
                opened = try CredentialStorage(at: db("p"), key: .passphrase(candidate))
                passphrase = candidate
                if isNew { passphraseNumber += 1 }
                tallies[point, default: FaultTally()].notes[isNew ? "new passphrase opens" : "old passphrase opens", default: 0] += 1
                break
            } catch CredentialStorageError.Code.wrongKey {
                continue
            } catch {
                problem(point, "the store does not open after the kill: \(describe(error))")
                break
            }
        }
        guard let storage = opened else {
            problem(point, "neither the old nor the new passphrase opens the store")
            tallies[point, default: FaultTally()].verifyFailures += 1
            return
        }
        checkOpened(storage, database: db("p"), keyFile: nil, passphrase: passphrase, ledger: &ledgerP, inflight: inflight, point: point)
    }

    func importRound() {
        let point = "import"
        tallies[point, default: FaultTally()].rounds += 1
        copyStoreFiles(names: Self.storeFiles, from: dir("import-template"), to: dir("import-round"))
        forgetAnchor(of: db("import-round"))
        var ledger = ledgerImport
        let database = db("import-round"), key = keyFile("import-round")
        let lone = tallies[point, default: FaultTally()].rounds % 2 == 0
        let probe = "SELECT count(*) FROM credentials"
        let before = lone ? (try? sql(database, probe)) ?? "?" : ""
        let command = Child(executable: credstore,
                            arguments: ["import", work.appendingPathComponent("large.csbundle").path, "--store", database.path, "--key-file", key.path, "--json"],
                            environment: ["CREDSTORE_BUNDLE_PASSPHRASE": bundlePassphrase],
                            output: dir("logs").appendingPathComponent("import-\(round).log"))
        let killed: Bool
        var inflight: [String: Expected] = [:]
        if lone {
            killed = loneRound(point: point, command: command, database: database, probe: probe, before: before)
        } else {
            (killed, inflight) = besideWriter(command, point: point, database: database, keyFile: key.path, prefix: "i\(round)", ledger: &ledger)
        }
        checkKeyFileStore(database: database, keyFile: key, ledger: &ledger, inflight: inflight, point: point) { storage in
            // The import is all or nothing.
            let present = try bundleItemsPresent(storage, point: point)
            if (present != 0 && present != bundleItems) || (!killed && present != bundleItems) {
                problem(point, "import torn: \(present) of \(bundleItems) bundle items present (killed: \(killed))")
                tallies[point, default: FaultTally()].lost += 1
            }
            tallies[point, default: FaultTally()].notes[present == 0 ? "store as before the import" : "import complete", default: 0] += 1
        }
    }

    func migrationRound() {
        let point = "migration"
        tallies[point, default: FaultTally()].rounds += 1
        copyStoreFiles(names: Self.storeFiles, from: dir("migration-template"), to: dir("migration-round"))
        forgetAnchor(of: db("migration-round"))
        var ledger = ledgerMigration
        let database = db("migration-round"), key = keyFile("migration-round")
        let command = Child(executable: selfExecutable(), arguments: ["open", database.path, key.path],
                            output: dir("logs").appendingPathComponent("migration-\(round).log"))
        // Every other round a writer opens (and so may migrate) the old store at the same time;
        // otherwise the killed open is the only one, so where it died shows in the schema left.
        var inflight: [String: Expected] = [:]
        if round % 2 == 0 {
            inflight = besideWriter(command, point: point, database: database, keyFile: key.path, prefix: "m\(round)", ledger: &ledger).inflight
        } else {
            // Aimed at the open itself: between the child's start and the end of its open, as calibrated.
            let (from, to) = openWindow
            let killed = kill([(command, Double.random(in: from...max(from + 0.001, to + (to - from) * 0.2), using: &random), point)])
            count(point, killed: killed[0])
            if !killed[0] { openWindow.1 = max(openWindow.0 + 0.001, openWindow.1 * 0.97) }
            if !killed[0] && command.process.terminationStatus != 0 {
                problem(point, "the open exited \(command.process.terminationStatus): \(command.output)")
            }
            // Read on a copy, so that the library's own recovery of the killed open is what the check below sees.
            copyStoreFiles(names: Self.storeFiles, from: dir("migration-round"), to: dir("migration-probe"))
            let steps = (try? sql(db("migration-probe"), "SELECT count(*) FROM schema_migrations")) ?? "?"
            let state = steps == "1" ? "old schema left" : steps == "\(schemaSteps)" ? "migrated" : "\(steps) steps (torn!)"
            tallies[point, default: FaultTally()].notes["lone open \(killed[0] ? "killed" : "finished"): \(state)", default: 0] += 1
            if steps != "1" && steps != "\(schemaSteps)" { problem(point, "a killed migration left \(steps) schema steps") }
        }
        checkKeyFileStore(database: database, keyFile: key, ledger: &ledger, inflight: inflight, point: point) { _ in
            let steps = try sql(database, "SELECT count(*) FROM schema_migrations")
            if steps != "\(schemaSteps)" {
                problem(point, "after reopening, \(steps) schema steps recorded, not \(schemaSteps)")
                tallies[point, default: FaultTally()].verifyFailures += 1
            }
        }
    }

    /// A complete run of each command, to learn how long it takes.
    func calibrate() {
        let started = Date()
        let rekey = runToEnd(credstore, ["rekey", "--store", db("a").path, "--key-file", keyFile("a").path], in: work)
        durations["rekey"] = Date().timeIntervalSince(started)
        if rekey.status != 0 { problem("rekey", "calibration rekey failed: \(rekey.errors)") }

        let next = "torture-pass-\(seed)-1"
        let passwdStart = Date()
        let passwd = runToEnd(credstore, ["passwd", "--store", db("p").path], environment: ["CREDSTORE_PASSPHRASE": passphrase, "CREDSTORE_NEW_PASSPHRASE": next], in: work)
        durations["passwd"] = Date().timeIntervalSince(passwdStart)
        if passwd.status == 0 { passphrase = next; passphraseNumber = 1 } else { problem("passwd", "calibration passwd failed: \(passwd.errors)") }

        copyStoreFiles(names: Self.storeFiles, from: dir("import-template"), to: dir("import-round"))
        forgetAnchor(of: db("import-round"))
        let importStart = Date()
        let imported = runToEnd(credstore, ["import", work.appendingPathComponent("large.csbundle").path, "--store", db("import-round").path,
                                       "--key-file", keyFile("import-round").path, "--json"],
                           environment: ["CREDSTORE_BUNDLE_PASSPHRASE": bundlePassphrase], in: work)
        durations["import"] = Date().timeIntervalSince(importStart)
        if imported.status != 0 { problem("import", "calibration import failed: \(imported.errors)") }

        // The open that migrates: when, after the spawn, the child starts and when its open returns.
        var starts: [Double] = [], ends: [Double] = []
        for _ in 0..<5 {
            copyStoreFiles(names: Self.storeFiles, from: dir("migration-template"), to: dir("migration-round"))
            forgetAnchor(of: db("migration-round"))
            let spawned = Date().timeIntervalSince1970
            let migrated = runToEnd(selfExecutable(), ["open", db("migration-round").path, keyFile("migration-round").path], in: work)
            durations["migration"] = Date().timeIntervalSince1970 - spawned
            if migrated.status != 0 { problem("migration", "calibration open failed: \(migrated.output) \(migrated.errors)") }
            for line in migrated.output.split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count == 2, let time = Double(fields[1]) else { continue }
                if fields[0] == "S" { starts.append(time - spawned) } else if fields[0] == "D" { ends.append(time - spawned) }
            }
        }
        if !starts.isEmpty && !ends.isEmpty {
            openWindow = (starts.sorted()[starts.count / 2], ends.sorted()[ends.count / 2])
        }
        note("calibration: the migrating open runs from \(String(format: "%.4f", openWindow.0)) s to \(String(format: "%.4f", openWindow.1)) s after the spawn")
        note("calibration (s): " + ["rekey", "passwd", "import", "migration"].map { "\($0) \(String(format: "%.3f", durations[$0] ?? 0))" }.joined(separator: ", "))
    }

    var totalKills: Int { tallies.values.reduce(0) { $0 + $1.kills } }

    func runRounds(kills: Int) -> Int32 {
        do {
            try setUp()
        } catch {
            fail("set-up failed: \(describe(error))")
        }
        makeDirectory(dir("logs"))
        calibrate()
        let order: [() -> Void] = [writersRound, rekeyRound, migrationRound, passwdRound, importRound, migrationRound, rekeyRound, migrationRound]
        var step = 0
        while totalKills < kills {
            round += 1
            order[step % order.count]()
            step += 1
            if round % 10 == 0 {
                note("round \(round): \(totalKills) kills, \(problems.count) problems")
            }
        }
        return report()
    }

    func report() -> Int32 {
        print("")
        print("faults: seed \(seed), \(round) rounds, \(totalKills) SIGKILLs")
        print(pad("fault point", 12) + pad("rounds", 8) + pad("kills", 7) + pad("finished", 10) + pad("acked", 8) + pad("lost", 6) + pad("verify-fail", 12) + "notes")
        for point in points {
            let tally = tallies[point] ?? FaultTally()
            let notes = tally.notes.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
            print(pad(point, 12) + pad("\(tally.rounds)", 8) + pad("\(tally.kills)", 7) + pad("\(tally.finishedBeforeKill)", 10)
                  + pad(point == "writer" ? "\(tally.acknowledged)" : "-", 8) + pad("\(tally.lost)", 6) + pad("\(tally.verifyFailures)", 12) + notes)
        }
        let lost = tallies.values.reduce(0) { $0 + $1.lost }
        let verifyFailures = tallies.values.reduce(0) { $0 + $1.verifyFailures }
        print("total: \(totalKills) kills, \(lost) lost or wrong acknowledged writes, \(verifyFailures) failed verifies, \(problems.count) problems")
        print("'rounds' counts writer rounds of 3 writers; writers also run (and are killed) beside every rekey, passwd, import and migration")
        for problem in problems.prefix(50) { print("problem: \(problem)") }
        return problems.isEmpty ? 0 : 1
    }
}

func faultsMain(_ options: Options) -> Int32 {
    let seed = options.seed()
    let kills = options.int("kills", default: 200)
    let work = URL(fileURLWithPath: options["dir"] ?? NSTemporaryDirectory() + "credstore-torture-faults-\(seed)")
    guard let credstorePath = options["credstore"] else { fail("faults needs --credstore PATH (the built credstore executable)") }
    let sqlite3 = URL(fileURLWithPath: options["sqlite3"] ?? "/usr/bin/sqlite3")
    print("faults: seed \(seed), target \(kills) kills, work folder \(work.path)")
    let run = FaultRun(seed: seed, work: work, credstore: URL(fileURLWithPath: credstorePath), sqlite3: sqlite3,
                       bundleItems: options.int("bundle-items", default: 3000))
    let status = run.runRounds(kills: kills)
    if status == 0 && options["keep"] == nil { try? FileManager.default.removeItem(at: work) }
    return status
}
