import CredentialStore
import Foundation
import SeededRandom
#if canImport(Glibc)
import Glibc
#endif

/// The right answers for the small store the trials damage, read back from the pristine copy.
struct ExpectedStore: Codable {
    struct Space: Codable {
        var host: String
        var realm: String?
        var users: [String: [String]]  // user -> [password, persistence]
        var defaultUser: String?

        var protectionSpace: ProtectionSpace {
            ProtectionSpace(host: host, port: 443, protocol: "https", realm: realm)
        }
    }

    var spaces: [Space]
    /// Every committed state the store went through while the template was written, oldest first
    /// (the last one is `spaces`): a damaged store that reads as one of them has been rolled back.
    var history: [[Space]] = []
}

private func table(_ credentials: [String: Credential]) -> [String: [String]] {
    credentials.mapValues { [$0.password, $0.persistence.rawValue] }
}

/// The state of the given spaces as the reads see it.
private func snapshot(_ storage: CredentialStorage, _ spaces: [ProtectionSpace]) throws -> [ExpectedStore.Space] {
    try spaces.map { space in
        ExpectedStore.Space(host: space.host, realm: space.realm, users: table(try storage.credentials(for: space)),
                            defaultUser: try storage.defaultCredential(for: space)?.user)
    }
}

/// Builds the template: half the data checkpointed into the database file, the rest (with updates,
/// removals and a default change) only in the WAL of a connection still open when the files are copied.
func makeCorruptionTemplate(in work: URL) throws -> ExpectedStore {
    let live = work.appendingPathComponent("live"), pristine = work.appendingPathComponent("pristine")
    makeDirectory(live)
    let database = live.appendingPathComponent("credentials.db"), key = live.appendingPathComponent("store.key")
    let hosts = (0..<6).map { "host-\($0).example.com" }
    let realms: [String?] = [nil, "Realm A", nil, "Zone", "Realm A", nil]
    var spaces: [ProtectionSpace] = []
    for (host, realm) in zip(hosts, realms) { spaces.append(ProtectionSpace(host: host, port: 443, protocol: "https", realm: realm)) }
    var history: [[ExpectedStore.Space]] = []
    do {
        let storage = try CredentialStorage(at: database, key: .keyFile(key))
        history.append(try snapshot(storage, spaces))
        for (index, space) in spaces.enumerated() {
            for user in 0..<3 {
                let persistence: Persistence = (index + user) % 4 == 0 ? .synchronizable : .permanent
                try storage.set(Credential(user: "user\(user)", password: "first-\(index)-\(user)-" + String(repeating: "x", count: index * 7), persistence: persistence), for: space)
                history.append(try snapshot(storage, spaces))
            }
        }
    }
    // Closed: the checkpoint moved everything into the database file. Now the WAL part.
    let storage = try CredentialStorage(at: database, key: .keyFile(key))
    for (index, space) in spaces.enumerated() {
        try storage.set(Credential(user: "later", password: "wal-\(index)", persistence: index % 2 == 0 ? .permanent : .synchronizable), for: space)
        history.append(try snapshot(storage, spaces))
        try storage.set(Credential(user: "user1", password: "updated-\(index)", persistence: .permanent), for: space)
        history.append(try snapshot(storage, spaces))
        if index % 3 == 0 {
            _ = try storage.remove(user: "user2", for: space, options: [.removeSynchronizable])
            history.append(try snapshot(storage, spaces))
        }
        if index % 2 == 1 {
            try storage.setDefaultCredential(Credential(user: "later", password: "wal-\(index)", persistence: index % 2 == 0 ? .permanent : .synchronizable), for: space)
            history.append(try snapshot(storage, spaces))
        }
    }
    let wal = live.appendingPathComponent("credentials.db-wal")
    let walSize = ((try? FileManager.default.attributesOfItem(atPath: wal.path))?[.size] as? Int) ?? 0
    guard walSize > 0 else { throw CredentialStorageError(.io, "the template has no WAL to damage") }
    copyStoreFiles(names: FaultRun.storeFiles, from: live, to: pristine)
    let expected = ExpectedStore(spaces: try snapshot(storage, spaces), history: history)
    // The copy, opened on its own, must say the same (the WAL is part of it).
    let check = work.appendingPathComponent("check")
    copyStoreFiles(names: FaultRun.storeFiles, from: pristine, to: check)
    let outcome = readAndCompare(database: check.appendingPathComponent("credentials.db"), key: check.appendingPathComponent("store.key"), expected: expected)
    guard outcome.hasPrefix("right-data ") || outcome == "right-data" else {
        throw CredentialStorageError(.io, "the undamaged copy does not read back right: \(outcome)")
    }
    return expected
}

/// Opens and reads every credential; returns an outcome line: `right-data`, `right-data-verify-flags`,
/// `error:<code>`, `unexpected-error:<code>`, `untyped-error`, or `wrong-answer`, then details.
func readAndCompare(database: URL, key: URL, expected: ExpectedStore) -> String {
    let accepted: Set<CredentialStorageError.Code> = [.corrupt, .tamperDetected, .wrongKey]
    func classify(_ error: any Error) -> String {
        guard let error = error as? CredentialStorageError else { return "untyped-error \(type(of: error)): \(error)" }
        return accepted.contains(error.code) ? "error:\(error.code) \(error.message)" : "unexpected-error:\(error.code) \(error.message)"
    }
    let storage: CredentialStorage
    do {
        storage = try CredentialStorage(at: database, key: .keyFile(key))
    } catch {
        return classify(error)
    }
    var wrong: [String] = []
    var firstError: String?
    // What the reads saw, to tell a rollback to an earlier committed state from a mixture.
    var observed: [ExpectedStore.Space] = []
    var observedWhole = true
    for space in expected.spaces {
        let target = space.protectionSpace
        var seen = ExpectedStore.Space(host: space.host, realm: space.realm, users: [:], defaultUser: nil)
        do {
            let found = table(try storage.credentials(for: target))
            seen.users = found
            if found != space.users { wrong.append("credentials(for: \(space.host)) = \(found.keys.sorted()) not \(space.users.keys.sorted())") }
        } catch {
            observedWhole = false
            if firstError == nil { firstError = classify(error) }
        }
        do {
            let found = try storage.defaultCredential(for: target)
            seen.defaultUser = found?.user
            if found?.user != space.defaultUser || (found.map { space.users[$0.user]?.first != $0.password } ?? false) {
                wrong.append("defaultCredential(for: \(space.host)) = \(found?.user ?? "nil") not \(space.defaultUser ?? "nil")")
            }
        } catch {
            observedWhole = false
            if firstError == nil { firstError = classify(error) }
        }
        observed.append(seen)
    }
    do {
        let all = try storage.allCredentials()
        var found: [String: [String: [String]]] = [:]
        for (space, credentials) in all { found["\(space.host)|\(space.realm ?? "")"] = table(credentials) }
        var wanted: [String: [String: [String]]] = [:]
        for space in expected.spaces where !space.users.isEmpty { wanted["\(space.host)|\(space.realm ?? "")"] = space.users }
        if found != wanted { wrong.append("allCredentials() differs: \(found.mapValues { $0.count }) not \(wanted.mapValues { $0.count })") }
    } catch {
        if firstError == nil { firstError = classify(error) }
    }
    var verifyFlags = false
    do {
        verifyFlags = !(try storage.maintenance.verify().isSound)
    } catch {
        if firstError == nil { firstError = classify(error) }
    }
    if !wrong.isEmpty {
        let also = firstError.map { " (also threw \($0))" } ?? ""
        if observedWhole, let state = expected.history.lastIndex(where: { same($0, observed) }) {
            return "stale-rollback to committed state \(state + 1) of \(expected.history.count), silently: " + wrong.prefix(3).joined(separator: "; ") + also
        }
        return "wrong-answer " + wrong.joined(separator: "; ") + also
    }
    if let firstError { return firstError }
    return verifyFlags ? "right-data-verify-flags" : "right-data"
}

private func same(_ left: [ExpectedStore.Space], _ right: [ExpectedStore.Space]) -> Bool {
    left.count == right.count && zip(left, right).allSatisfy { $0.host == $1.host && $0.users == $1.users && $0.defaultUser == $1.defaultUser }
}

/// `corrupt-trial DIR EXPECTED-JSON`: prints `OUTCOME <outcome line>`.
func corruptTrialMain(_ arguments: [String]) -> Never {
    guard arguments.count >= 2 else { fail("usage: corrupt-trial DIR EXPECTED-JSON") }
    let folder = URL(fileURLWithPath: arguments[0])
    guard let data = FileManager.default.contents(atPath: arguments[1]),
          let expected = try? JSONDecoder().decode(ExpectedStore.self, from: data) else { fail("cannot read \(arguments[1])") }
    let outcome = readAndCompare(database: folder.appendingPathComponent("credentials.db"), key: folder.appendingPathComponent("store.key"), expected: expected)
    emit("OUTCOME " + outcome.replacingOccurrences(of: "\n", with: " "))
    exit(0)
}

/// Damages one file of the trial's copy; returns a description.
func damage(_ folder: URL, random: inout SplitMix) -> String {
    let roll = Double.random(in: 0..<1, using: &random)
    let name = roll < 0.45 ? "credentials.db" : roll < 0.8 ? "credentials.db-wal" : roll < 0.9 ? "store.key" : "credentials.db-shm"
    let url = folder.appendingPathComponent(name)
    guard var bytes = FileManager.default.contents(atPath: url.path).map(Array.init), !bytes.isEmpty else {
        return "\(name): missing or empty, left alone"
    }
    let original = bytes.count
    var actions: [String] = []
    let kind = Double.random(in: 0..<1, using: &random)
    if kind < 0.6 || kind >= 0.85 {
        let flips = Int.random(in: 1...16, using: &random)
        // Sometimes a burst in one place, sometimes scattered.
        let burst = Bool.random(using: &random)
        let center = Int.random(in: 0..<bytes.count, using: &random)
        var positions: [Int] = []
        for _ in 0..<flips {
            let position = burst ? min(bytes.count - 1, max(0, center + Int.random(in: -32...32, using: &random)))
                                 : Int.random(in: 0..<bytes.count, using: &random)
            bytes[position] ^= UInt8.random(in: 1...255, using: &random)
            positions.append(position)
        }
        actions.append("flipped \(flips) byte(s) at \(positions.sorted().prefix(6).map(String.init).joined(separator: ","))\(flips > 6 ? "…" : "")")
    }
    if kind >= 0.6 {
        let length: Int
        if Bool.random(using: &random) && bytes.count > 4096 {
            length = Int.random(in: 0..<(bytes.count / 4096), using: &random) * 4096  // a page boundary
        } else {
            length = Int.random(in: 0..<bytes.count, using: &random)
        }
        bytes.removeSubrange(length...)
        actions.append("truncated to \(length)")
    }
    do {
        try Data(bytes).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
    } catch {
        fail("cannot write \(url.path): \(error)")
    }
    return "\(name) (\(original) bytes): " + actions.joined(separator: ", ")
}

func corruptMain(_ options: Options) -> Int32 {
    let seed = options.seed()
    let trials = options.int("trials", default: 1000)
    let only = options["trial"].flatMap(Int.init)
    let work = URL(fileURLWithPath: options["dir"] ?? NSTemporaryDirectory() + "credstore-torture-corrupt-\(seed)")
    print("corrupt: seed \(seed), \(only.map { "trial \($0) only" } ?? "\(trials) trials"), work folder \(work.path)")
    let expectedURL = work.appendingPathComponent("expected.json")
    let expected: ExpectedStore
    if options["reuse"] != nil, let data = FileManager.default.contents(atPath: expectedURL.path),
       let saved = try? JSONDecoder().decode(ExpectedStore.self, from: data) {
        // The template of an earlier run (kept with --keep 1), so that its trials replay byte for byte.
        expected = saved
        print("reusing the template in \(work.path)")
    } else {
        makeDirectory(work)
        do {
            expected = try makeCorruptionTemplate(in: work)
            try JSONEncoder().encode(expected).write(to: expectedURL)
        } catch {
            fail("cannot build the template store: \(describe(error))")
        }
    }
    let sizes = FaultRun.storeFiles.map { name in
        "\(name) \(((try? FileManager.default.attributesOfItem(atPath: work.appendingPathComponent("pristine/\(name)").path))?[.size] as? Int) ?? 0)"
    }
    print("template: \(expected.spaces.reduce(0) { $0 + $1.users.count }) credentials in \(expected.spaces.count) spaces; files (bytes): \(sizes.joined(separator: ", "))")

    var outcomes: [String: Int] = [:]
    var perFile: [String: [String: Int]] = [:]
    var failures: [String] = []
    let trialFolder = work.appendingPathComponent("trial")
    for trial in only.map({ [$0] }) ?? Array(0..<trials) {
        var random = SplitMix(seed: seed, stream: UInt64(trial))
        copyStoreFiles(names: FaultRun.storeFiles, from: work.appendingPathComponent("pristine"), to: trialFolder)
        let damaged = damage(trialFolder, random: &random)
        let file = String(damaged.prefix { $0 != " " })
        let child = Child(executable: selfExecutable(), arguments: ["corrupt-trial", trialFolder.path, expectedURL.path],
                          output: work.appendingPathComponent("trial.out"))
        let outcome: String
        let detail: String
        if let status = child.wait(seconds: 60) {
            if status.reason == .uncaughtSignal {
                outcome = "crash"
                detail = "signal \(status.status): \(child.errors.suffix(400))"
            } else if let line = child.output.split(separator: "\n").last(where: { $0.hasPrefix("OUTCOME ") }) {
                let text = line.dropFirst("OUTCOME ".count)
                outcome = String(text.prefix { $0 != " " })
                detail = String(text)
            } else {
                outcome = "crash"
                detail = "exit \(status.status) without an outcome: \(child.errors.suffix(400))"
            }
        } else {
            outcome = "hang"
            detail = "no answer in 60 s"
        }
        outcomes[outcome, default: 0] += 1
        perFile[file, default: [:]][outcome, default: 0] += 1
        let acceptable = outcome.hasPrefix("right-data") || outcome.hasPrefix("error:")
        if !acceptable {
            failures.append("trial \(trial) [\(damaged)]: \(detail)")
            note("FAILURE trial \(trial) [\(damaged)]: \(detail.prefix(400))")
        }
        if only != nil { print("trial \(trial): \(damaged)\n  → \(detail)") }
        if (trial + 1) % 100 == 0 { note("\(trial + 1) trials, \(failures.count) failures") }
    }
    print("")
    print("corrupt: seed \(seed), \(outcomes.values.reduce(0, +)) trials")
    print(pad("outcome", 44) + "count")
    for (outcome, count) in outcomes.sorted(by: { $0.key < $1.key }) { print(pad(outcome, 44) + "\(count)") }
    print("")
    print("by damaged file:")
    for (file, counts) in perFile.sorted(by: { $0.key < $1.key }) {
        print("  " + pad(file, 22) + counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
    }
    let wrong = outcomes.filter { $0.key.hasPrefix("wrong") || $0.key.hasPrefix("stale") }.values.reduce(0, +)
    let crashes = (outcomes["crash"] ?? 0) + (outcomes["hang"] ?? 0)
    print("wrong answers: \(wrong) (stale-rollback: an earlier committed state returned without an error; wrong-answer: a state never committed); crashes or hangs: \(crashes); other failures: \(failures.count - wrong - crashes)")
    for failure in failures.prefix(40) { print("failure: \(failure.prefix(600))") }
    if failures.count > 40 { print("… \(failures.count - 40) more") }
    print("replay one trial (template kept with --keep 1): credstore-torture corrupt --seed \(seed) --dir \(work.path) --reuse 1 --trial N --keep 1")
    if options["keep"] == nil { try? FileManager.default.removeItem(at: work) }
    return failures.isEmpty ? 0 : 1
}
