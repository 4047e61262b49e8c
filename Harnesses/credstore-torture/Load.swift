import CredentialStore
import Foundation
import SeededRandom
#if canImport(Glibc)
import Glibc
#endif

/// What one load thread did.
struct LoadCounts: Codable {
    var reads = 0
    var writes = 0
    var errors = 0
    var wrong = 0
    var maxLatency = 0.0
    var messages: [String] = []

    mutating func add(_ other: LoadCounts) {
        reads += other.reads
        writes += other.writes
        errors += other.errors
        wrong += other.wrong
        maxLatency = max(maxLatency, other.maxLatency)
        for message in other.messages where messages.count < 10 { messages.append(message) }
    }
}

final class LoadResults: @unchecked Sendable {
    private let lock = NSLock()
    private var total = LoadCounts()

    func add(_ counts: LoadCounts) {
        lock.lock()
        total.add(counts)
        lock.unlock()
    }

    var counts: LoadCounts {
        lock.lock()
        defer { lock.unlock() }
        return total
    }
}

/// One thread's mixed work: its own users (whose values it knows, so reads are checked) in its own
/// spaces and in spaces every thread of every process shares (contending for their default).
func loadThread(storage: CredentialStorage, process: Int, thread: Int, until deadline: Date, seed: UInt64) -> LoadCounts {
    var random = SplitMix(seed: seed, stream: UInt64(process * 100 + thread))
    var counts = LoadCounts()
    let me = "p\(process)t\(thread)"
    // Own model: space host -> user -> password.
    var model: [String: [String: String]] = [:]
    func ownSpace(_ key: Int) -> ProtectionSpace {
        ProtectionSpace(host: "\(me)-\(key % 4).load", port: 443, protocol: "https", realm: nil)
    }
    func sharedSpace(_ key: Int) -> ProtectionSpace {
        ProtectionSpace(host: "shared-\(key % 8).load", port: 443, protocol: "https", realm: "Shared")
    }
    var operation = 0
    func record(_ text: String) {
        if counts.messages.count < 10 { counts.messages.append("\(me): \(text)") }
    }
    while Date() < deadline {
        operation += 1
        let roll = Double.random(in: 0..<1, using: &random)
        let key = Int.random(in: 0..<16, using: &random)
        let space = roll < 0.55 ? ownSpace(key) : sharedSpace(key)
        let user = roll < 0.55 ? "u\(key)" : "\(me)-u\(key % 2)"
        let started = Date()
        do {
            if roll < 0.20 || (roll >= 0.55 && roll < 0.70) {
                let password = "pw-\(me)-\(operation)"
                try storage.set(Credential(user: user, password: password, persistence: .permanent), for: space)
                model[space.host, default: [:]][user] = password
                counts.writes += 1
            } else if roll < 0.27 || (roll >= 0.70 && roll < 0.75) {
                _ = try storage.remove(user: user, for: space)
                model[space.host, default: [:]][user] = nil
                counts.writes += 1
            } else {
                let found = try storage.credentials(for: space)
                if roll >= 0.90 { _ = try storage.defaultCredential(for: space) }
                counts.reads += 1
                // Every user of ours in this space, exactly as we last wrote it.
                let ours = found.filter { roll < 0.55 || $0.key.hasPrefix("\(me)-") }.mapValues(\.password)
                let expected = model[space.host] ?? [:]
                if ours != expected {
                    counts.wrong += 1
                    record("wrong read of \(space.host): expected users \(expected.keys.sorted()), found \(ours.keys.sorted())")
                }
            }
        } catch {
            counts.errors += 1
            record(describe(error))
        }
        counts.maxLatency = max(counts.maxLatency, Date().timeIntervalSince(started))
    }
    return counts
}

/// `load-worker DB KEYFILE PROCESS THREADS START-EPOCH SECONDS SEED`: prints one JSON line of counts.
func loadWorkerMain(_ arguments: [String]) -> Never {
    guard arguments.count >= 7, let process = Int(arguments[2]), let threads = Int(arguments[3]),
          let start = Double(arguments[4]), let seconds = Double(arguments[5]), let seed = UInt64(arguments[6]) else {
        fail("usage: load-worker DB KEYFILE PROCESS THREADS START-EPOCH SECONDS SEED")
    }
    let results = LoadResults()
    let storage: CredentialStorage
    do {
        storage = try openStore(URL(fileURLWithPath: arguments[0]), key: storeKey(keyFile: arguments[1]))
    } catch {
        var counts = LoadCounts()
        counts.errors = 1
        counts.messages = ["p\(process): open: \(describe(error))"]
        results.add(counts)
        emitCounts(results.counts)
        exit(3)
    }
    sleepSeconds(start - Date().timeIntervalSince1970)
    let deadline = Date(timeIntervalSince1970: start + seconds)
    let group = DispatchGroup()
    for thread in 0..<threads {
        group.enter()
        let worker = Thread {
            results.add(loadThread(storage: storage, process: process, thread: thread, until: deadline, seed: seed))
            group.leave()
        }
        worker.start()
    }
    group.wait()
    emitCounts(results.counts)
    exit(0)
}

func emitCounts(_ counts: LoadCounts) {
    let data = (try? JSONEncoder().encode(counts)) ?? Data()
    emit(String(decoding: data, as: UTF8.self))
}

func loadMain(_ options: Options) -> Int32 {
    let seed = options.seed()
    let seconds = options.double("seconds", default: 30)
    let processes = options.int("processes", default: 8)
    let threads = options.int("threads", default: 2)
    let work = URL(fileURLWithPath: options["dir"] ?? NSTemporaryDirectory() + "credstore-torture-load-\(seed)")
    print("load: seed \(seed), \(processes) processes × \(threads) threads for \(seconds) s, work folder \(work.path)")
    makeDirectory(work)
    let database = work.appendingPathComponent("credentials.db"), key = work.appendingPathComponent("store.key")
    do {
        // Created beforehand, with the shared spaces populated.
        let storage = try CredentialStorage(at: database, key: .keyFile(key))
        for index in 0..<8 {
            try storage.set(Credential(user: "seed", password: "seed-\(index)", persistence: .permanent),
                            for: ProtectionSpace(host: "shared-\(index).load", port: 443, protocol: "https", realm: "Shared"))
        }
    } catch {
        fail("cannot create the store: \(describe(error))")
    }
    let start = Date().timeIntervalSince1970 + 2
    let children = (0..<processes).map { process in
        Child(executable: selfExecutable(),
              arguments: ["load-worker", database.path, key.path, "\(process)", "\(threads)", "\(start)", "\(seconds)", "\(seed)"],
              output: work.appendingPathComponent("worker-\(process).out"))
    }
    var total = LoadCounts()
    var failures: [String] = []
    for (index, child) in children.enumerated() {
        guard let status = child.wait(seconds: seconds + 120) else {
            failures.append("worker \(index) did not finish (killed)")
            continue
        }
        if status.reason != .exit || status.status != 0 {
            failures.append("worker \(index) ended with \(status.reason == .exit ? "status" : "signal") \(status.status): \(child.errors.prefix(500))")
        }
        guard let line = child.output.split(separator: "\n").last,
              let counts = try? JSONDecoder().decode(LoadCounts.self, from: Data(line.utf8)) else {
            failures.append("worker \(index) printed no counts")
            continue
        }
        total.add(counts)
    }
    var verified = "not run"
    do {
        let report = try CredentialStorage(at: database, key: .keyFile(key)).maintenance.verify()
        verified = report.isSound ? "sound (\(report.credentialsChecked) credentials)" : "PROBLEMS \(report.problems)"
        if !report.isSound { failures.append("verify: \(report.problems)") }
    } catch {
        failures.append("verify threw \(describe(error))")
    }
    let ops = total.reads + total.writes
    print("load: \(processes) processes × \(threads) threads, \(String(format: "%.0f", seconds)) s")
    print("  operations: \(ops) (\(total.reads) reads, \(total.writes) writes)")
    print("  throughput: \(String(format: "%.0f", Double(ops) / seconds)) ops/s (\(String(format: "%.0f", Double(total.reads) / seconds)) reads/s, \(String(format: "%.0f", Double(total.writes) / seconds)) writes/s)")
    print("  slowest single call: \(String(format: "%.3f", total.maxLatency)) s")
    print("  errors surfaced to callers: \(total.errors); wrong reads: \(total.wrong)")
    print("  verify afterwards: \(verified)")
    for message in total.messages { print("  error: \(message)") }
    for failure in failures { print("  failure: \(failure)") }
    let bad = total.errors > 0 || total.wrong > 0 || !failures.isEmpty
    if !bad && options["keep"] == nil { try? FileManager.default.removeItem(at: work) }
    return bad ? 1 : 0
}
