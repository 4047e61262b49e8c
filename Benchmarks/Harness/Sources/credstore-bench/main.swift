// In-process timings beside the C reference (`Benchmarks/reference/cref.c`), the suite behind
// docs/performance.md. A package of its own (Benchmarks/Harness) that depends on the
// `CredentialStore` product by path and sees its public API only, built with plain
// `swift build -c release`: what an app gets. Each mode is meant to run as its own process, so
// that the peak RSS it reports (getrusage ru_maxrss, printed last) is that mode's alone. Output:
// one JSON object per line on stdout, {"peer", "n", "metric", "value", "unit", "samples", "note"},
// the rows of the C reference and of the peer drivers in Benchmarks/peers.
//
//   credstore-bench fill DIR N [synchronizable]  fill DIR/perm-N (N permanent credentials, one `set` each,
//                                             and PROXIES proxy credentials) or DIR/sync-N, once; later
//                                             runs reuse it
//   credstore-bench lookup DIR N LOOKUPS      defaultCredential(for:) and credentials(for:) on DIR/perm-N
//   credstore-bench set DIR N COUNT           durable `set`s: into a fresh store (N = 0), or into DIR/perm-N
//                                             (then removed again, so the cached store stays as it was)
//   credstore-bench open DIR N COUNT [SECONDS] opens of the key-file store DIR/perm-N, each in full and
//                                             closed (as `credstore get` opens), then open + first lookup;
//                                             each kind at most COUNT times and about SECONDS long
//   credstore-bench verify DIR N COUNT [SECONDS] verify() of DIR/perm-N, at most COUNT times, about SECONDS
//   credstore-bench import DIR N [REPEATS] [alone]  export N synchronizable items to a recipient bundle,
//                                             import it into a new store (the source store is cached in
//                                             DIR/sync-N); with `alone`, each import in a child process
//                                             (`import-bundle STORE N BUNDLE`), so its memory is its own
//
// Store i's credential: space https://h<i>.example.com:443, realm realm<i%10>, method HTTP Basic
// (a space with a realm and a method, as a server's challenge names it), user<i>, password
// pw%014d, as in the peer scripts and cref.c. A permanent store also holds `proxies` proxy
// credentials (http://proxy<k>.example.com:3128, Basic, no realm) for `credstore get --proxy http`.
// Each store directory holds `credentials.db` and its key file `store.key`, the CLI's layout, so
// `credstore get --store DIR/perm-N/credentials.db` reads it.
//
// A fill is one durable `set` per credential: the public API has no batch write (the CLI's
// `setAll` is `package`), so Benchmarks/run preloads Benchmarks/nosync.c for it, which makes
// fsync a no-op. That is setup; no timed figure is taken under it.
import CredentialStore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// Nearest-rank percentile, as side_by_side.py and Benchmarks/peers/peerbench.py compute p99.
func percentile(_ xs: [Double], _ p: Double) -> Double {
    let s = xs.sorted()
    let rank = min(s.count, max(1, Int((p * Double(s.count)).rounded(.up))))
    return s[rank - 1]
}

func space(_ i: Int) -> ProtectionSpace {
    ProtectionSpace(host: "h\(i).example.com", port: 443, protocol: "https", realm: "realm\(i % 10)",
                    authenticationMethod: .httpBasic)
}

/// The proxy credentials of a permanent store, beside its N server credentials.
let proxies = 16

func proxySpace(_ k: Int) -> ProtectionSpace {
    ProtectionSpace(proxy: ProxyEndpoint(host: "proxy\(k).example.com", port: 3128, type: .http), realm: nil, authenticationMethod: .httpBasic)
}

/// What the marker of a filled store says: a store filled by an older harness (other spaces, no
/// proxies) is filled again.
let fillLayout = "layout 2: realm and Basic, \(proxies) proxies"

func password(_ i: Int) -> String { String(format: "pw%014d", i) }

func jsonString(_ s: String) -> String {
    var out = "\""
    for c in s.unicodeScalars {
        switch c {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        default: out.unicodeScalars.append(c)
        }
    }
    return out + "\""
}

/// One result row, flushed at once so that a driver sees it even if a later step fails.
func emit(_ n: Int, _ metric: String, _ value: Double, _ unit: String, samples: Int = 1, note: String = "") {
    let line = "{\"peer\": \"credstore\", \"n\": \(n), \"metric\": \(jsonString(metric)), \"value\": \(value), "
        + "\"unit\": \(jsonString(unit)), \"samples\": \(samples), \"note\": \(jsonString(note))}\n"
    FileHandle.standardOutput.write(Data(line.utf8))
}

/// Peak resident set size of this process so far, in kB (Linux reports ru_maxrss in kB).
func emitPeakRSS(_ n: Int, _ mode: String) {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    emit(n, "peak_rss_kb", Double(usage.ru_maxrss), "kB", note: "credstore-bench \(mode), whole process")
    // What the resident set is made of at the end: anonymous memory (heap, stacks) and file pages
    // (the binary, libraries, and the store's pages mapped by SQLite's mmap, which are the shared
    // page cache rather than memory of this process's own).
    if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) {
        for line in status.split(separator: "\n") where line.hasPrefix("RssAnon:") || line.hasPrefix("RssFile:") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if parts.count >= 2, let kb = Double(parts[1]) {
                let name = parts[0].dropLast().lowercased()
                emit(n, "\(name == "rssanon" ? "rss_anon" : "rss_file")_end_kb", kb, "kB", note: "credstore-bench \(mode), at exit")
            }
        }
    }
}

/// One line of /proc/self/status, in kB (0 where there is none).
func residentKB(_ key: String) -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix(key) {
        let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        if parts.count >= 2, let kb = Double(parts[1]) { return kb }
    }
    return 0
}

/// Imports `bundle` into `destination`, keeping in `peakAnonymous` the largest anonymous resident
/// set seen, sampled from the progress callback: ru_maxrss also counts the store's and the
/// bundle's file pages, which are the kernel's page cache rather than memory the import holds.
func importSampling(_ destination: CredentialStorage, _ bundle: URL, _ peakAnonymous: inout Double) throws -> ImportReport {
    var peak = peakAnonymous
    var lastSample = 0.0
    let report = try destination.sync.importBundle(from: bundle, progress: { _, _ in
        let t = now()
        if t - lastSample > 0.05 {
            lastSample = t
            peak = max(peak, residentKB("RssAnon:"))
        }
    })
    peakAnonymous = max(peak, residentKB("RssAnon:"))
    return report
}

func storeDirectory(_ dir: URL, _ name: String) -> URL {
    dir.appendingPathComponent(name, isDirectory: true)
}

func open(_ storeDir: URL, integrityCheck: CredentialStorage.IntegrityCheck = .onOpen) throws -> CredentialStorage {
    try FileManager.default.createDirectory(at: storeDir, withIntermediateDirectories: true)
    let location = StoreLocation(databaseURL: storeDir.appendingPathComponent("credentials.db"))
    return try CredentialStorage(at: location, options: StorageOptions(integrityCheck: integrityCheck))
}

/// Opens the cached store `name` with `n` credentials of `persistence`, filling it first if an
/// earlier fill did not complete (the marker file is written last).
func filledStore(_ dir: URL, _ name: String, _ n: Int, _ persistence: Persistence) throws -> CredentialStorage {
    let storeDir = storeDirectory(dir, name)
    let marker = storeDir.appendingPathComponent("filled")
    if let text = try? String(contentsOf: marker, encoding: .utf8), text == "\(n)\n\(fillLayout)\n" {
        return try open(storeDir)
    }
    try? FileManager.default.removeItem(at: storeDir)
    let storage = try open(storeDir)
    var samples: [Double] = []
    samples.reserveCapacity(n)
    let start = now()
    for i in 0..<n {
        let t = now()
        try storage.set(Credential(user: "user\(i)", password: password(i), persistence: persistence), for: space(i))
        samples.append(now() - t)
    }
    if persistence == .permanent {
        for k in 0..<proxies {
            try storage.set(Credential(user: "proxyuser\(k)", password: password(k), persistence: persistence), for: proxySpace(k))
        }
    }
    let total = now() - start
    emit(n, "fill_s", total, "s", samples: n, note: "\(persistence) tier, one durable set per credential, from empty, fsync off")
    emit(n, "fill_set_med_us", median(samples) * 1e6, "us", samples: n, note: "median set while filling 0..N, fsync off")
    try Data("\(n)\n\(fillLayout)\n".utf8).write(to: marker)
    return storage
}

/// Runs `body` up to `count` times, and no more once `seconds` have passed (at least `floor`
/// times): an open that checks every row takes seconds at a million credentials.
func timedRepeats(_ count: Int, seconds: Double, floor: Int = 3, _ body: () throws -> Void) rethrows -> [Double] {
    var samples: [Double] = []
    let start = now()
    while samples.count < count && (samples.count < floor || now() - start < seconds) {
        let t = now()
        try body()
        samples.append(now() - t)
    }
    return samples
}

func usage() -> Never {
    FileHandle.standardError.write(Data("""
        usage: credstore-bench fill DIR N [synchronizable] | lookup DIR N LOOKUPS | set DIR N COUNT | open DIR N COUNT [SECONDS] | verify DIR N COUNT [SECONDS] | import DIR N [REPEATS] [alone] | import-bundle STORE N BUNDLE

        """.utf8))
    exit(2)
}

let args = CommandLine.arguments
guard args.count >= 4, let n = Int(args[3]) else { usage() }
let mode = args[1]
let dir = URL(fileURLWithPath: args[2], isDirectory: true)
try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
func intArgument(_ index: Int, _ fallback: Int? = nil) -> Int {
    if index < args.count, let value = Int(args[index]) { return value }
    if let fallback { return fallback }
    usage()
}

switch mode {
case "fill":
    // `fill DIR N synchronizable` fills DIR/sync-N, the source of the import benchmark.
    let synchronizable = args.count > 4 && args[4] == "synchronizable"
    _ = try filledStore(dir, synchronizable ? "sync-\(n)" : "perm-\(n)", n, synchronizable ? .synchronizable : .permanent)
    emitPeakRSS(n, mode)

case "lookup":
    let lookups = intArgument(4)
    let storage = try filledStore(dir, "perm-\(n)", n, .permanent)
    var generator = SystemRandomNumberGenerator()
    let picks = (0..<lookups).map { _ in Int.random(in: 0..<n, using: &generator) }
    // Warm up: the first lookups page the B-tree in; both the C reference and this time a warm store.
    for i in picks.prefix(20) { _ = try storage.defaultCredential(for: space(i)) }
    var defaults: [Double] = []
    var lists: [Double] = []
    for i in picks {
        let s = space(i)
        var t = now()
        let c = try storage.defaultCredential(for: s)
        defaults.append(now() - t)
        precondition(c?.password == password(i), "lookup of \(i) returned the wrong password")
        t = now()
        let all = try storage.credentials(for: s)
        lists.append(now() - t)
        precondition(all["user\(i)"]?.password == password(i), "credentials(for:) of \(i) is wrong")
    }
    emit(n, "lookup_med_us", median(defaults) * 1e6, "us", samples: lookups, note: "defaultCredential(for:), warm, permanent tier")
    emit(n, "lookup_p99_us", percentile(defaults, 0.99) * 1e6, "us", samples: lookups, note: "defaultCredential(for:)")
    emit(n, "credentials_med_us", median(lists) * 1e6, "us", samples: lookups, note: "credentials(for:), one user per space")
    emit(n, "credentials_p99_us", percentile(lists, 0.99) * 1e6, "us", samples: lookups, note: "credentials(for:)")
    emitPeakRSS(n, mode)

case "set":
    let count = intArgument(4)
    let storeDir = n == 0
        ? storeDirectory(dir, "set-\(UUID().uuidString)")
        : storeDirectory(dir, "perm-\(n)")
    let storage = n == 0 ? try open(storeDir) : try filledStore(dir, "perm-\(n)", n, .permanent)
    var samples: [Double] = []
    var added: [(Credential, ProtectionSpace)] = []
    for j in 0..<count {
        // New spaces, so that every set inserts a credential and makes it the space's default.
        let s = ProtectionSpace(host: "set\(j).example.org", port: 443, protocol: "https", realm: "bench")
        let c = Credential(user: "setter\(j)", password: "pw-\(UInt64.random(in: 0...UInt64.max))", persistence: .permanent)
        let t = now()
        try storage.set(c, for: s)
        samples.append(now() - t)
        added.append((c, s))
    }
    let note = n == 0 ? "durable set of a new credential, store growing 0..COUNT" : "durable set of a new credential into a store of N"
    emit(n, "set_med_us", median(samples) * 1e6, "us", samples: count, note: note)
    emit(n, "set_mean_us", samples.reduce(0, +) / Double(count) * 1e6, "us", samples: count, note: note)
    emit(n, "set_p99_us", percentile(samples, 0.99) * 1e6, "us", samples: count, note: note)
    emitPeakRSS(n, mode)
    if n == 0 {
        try? FileManager.default.removeItem(at: storeDir)
    } else {
        for (c, s) in added { _ = try storage.remove(user: c.user, for: s) }
    }

case "open":
    let count = intArgument(4)
    let seconds = Double(intArgument(5, 10))
    let storeDir = storeDirectory(dir, "perm-\(n)")
    do { _ = try filledStore(dir, "perm-\(n)", n, .permanent) }
    var generator = SystemRandomNumberGenerator()
    // The first open of this process, with its first lookup: what a program starting up pays.
    let t = now()
    var storage: CredentialStorage? = try open(storeDir)
    let firstOpen = now() - t
    let i = Int.random(in: 0..<n, using: &generator)
    let found = try storage!.defaultCredential(for: space(i))
    let firstOpenLookup = now() - t
    precondition(found?.password == password(i), "lookup after open is wrong")
    storage = nil
    let samples = try timedRepeats(count, seconds: seconds) {
        let storage = try open(storeDir)
        withExtendedLifetime(storage) {}
    }
    let integrity = "table seal checked as the library's default open does"
    emit(n, "open_med_ms", median(samples) * 1e3, "ms", samples: samples.count, note: "CredentialStorage(at:key: .keyFile) of an existing store, warm cache, \(integrity)")
    emit(n, "open_p99_ms", percentile(samples, 0.99) * 1e3, "ms", samples: samples.count, note: "")
    emit(n, "open_first_ms", firstOpen * 1e3, "ms", note: "first open in this process")
    emit(n, "open_first_lookup_first_ms", firstOpenLookup * 1e3, "ms", note: "first open in this process and its first defaultCredential(for:)")
    // Open and one lookup, each pair in full: what a program that starts, answers once and exits pays.
    let withLookup = try timedRepeats(count, seconds: seconds) {
        let storage = try open(storeDir)
        let i = Int.random(in: 0..<n, using: &generator)
        guard try storage.defaultCredential(for: space(i))?.password == password(i) else { fatalError("lookup after open is wrong") }
    }
    emit(n, "open_lookup_med_ms", median(withLookup) * 1e3, "ms", samples: withLookup.count, note: "open (key file) + first defaultCredential(for:), warm cache")
    emitPeakRSS(n, mode)

case "verify":
    let count = intArgument(4)
    let seconds = Double(intArgument(5, 10))
    let storage = try filledStore(dir, "perm-\(n)", n, .permanent)
    var checked = 0
    let samples = try timedRepeats(count, seconds: seconds, floor: 1) {
        let report = try storage.maintenance.verify()
        precondition(report.isSound, "the benchmark store does not verify: \(report.problems.prefix(3))")
        checked = report.credentialsChecked
    }
    emit(n, "verify_med_ms", median(samples) * 1e3, "ms", samples: samples.count, note: "verify() of the whole store, \(checked) credentials checked")
    emitPeakRSS(n, mode)

case "import":
    // `import DIR N REPEATS alone`: each import in a child process of its own (`import-bundle`), so
    // that its memory is the import's alone, not the export's before it in the same process. The
    // child's ru_maxrss is no help (Linux keeps it across fork and execve, so it starts at this
    // process's peak); its anonymous resident set, sampled from /proc, is its own.
    let repeats = intArgument(4, 1)
    let alone = args.count > 5 && args[5] == "alone"
    let source = try filledStore(dir, "sync-\(n)", n, .synchronizable)
    let work = storeDirectory(dir, "import-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: work) }
    var exports: [Double] = []
    var imports: [Double] = []
    var peakAnonymous = 0.0
    // What the process held before the import began (the source store, the export's leftovers):
    // the import's own memory is the peak above it.
    var anonymousBefore = 0.0
    for r in 0..<repeats {
        let destinationDir = storeDirectory(work, "target-\(r)")
        var destination: CredentialStorage? = try open(destinationDir)
        let bundle = work.appendingPathComponent("bundle-\(r).csbundle")
        var t = now()
        try source.sync.export(to: bundle, protection: .recipients([destination!.sync.deviceKey]))
        exports.append(now() - t)
        try destination!.sync.trust(source.sync.deviceKey)
        if alone {
            destination = nil
            let child = Process()
            child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            child.arguments = ["import-bundle", destinationDir.path, String(n), bundle.path]
            let pipe = Pipe()
            child.standardOutput = pipe
            try child.run()
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            child.waitUntilExit()
            guard child.terminationStatus == 0 else { fatalError("import-bundle failed") }
            for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
                guard let row = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let metric = row["metric"] as? String, let value = row["value"] as? Double else { continue }
                switch metric {
                case "import_s": imports.append(value)
                case "import_peak_anon_kb": peakAnonymous = max(peakAnonymous, value)
                case "import_anon_before_kb": anonymousBefore = max(anonymousBefore, value)
                default: break
                }
            }
            continue
        }
        anonymousBefore = max(anonymousBefore, residentKB("RssAnon:"))
        t = now()
        let report = try importSampling(destination!, bundle, &peakAnonymous)
        imports.append(now() - t)
        let sample = try destination!.defaultCredential(for: space(n / 2))
        precondition(report.added == n && sample?.password == password(n / 2), "import did not bring every item")
    }
    emit(n, "export_s", median(exports), "s", samples: repeats, note: "exportSynchronizable, recipient bundle")
    emit(n, "import_s", median(imports), "s", samples: repeats, note: "importBundle of a recipient bundle into an empty store" + (alone ? ", in a process of its own" : ""))
    emit(n, "import_peak_anon_kb", peakAnonymous, "kB", samples: repeats, note: "largest RssAnon sampled every 50 ms during the imports")
    emit(n, "import_anon_before_kb", anonymousBefore, "kB", samples: repeats, note: "RssAnon right before an import began")
    emitPeakRSS(n, mode)

case "import-bundle":
    // `import-bundle STORE N BUNDLE`: the import half of `import … alone`, in a process of its own.
    guard args.count >= 5 else { usage() }
    let destination = try open(URL(fileURLWithPath: args[2], isDirectory: true))
    emit(n, "import_anon_before_kb", residentKB("RssAnon:"), "kB", note: "RssAnon right before the import began")
    var peakAnonymous = 0.0
    let t = now()
    let report = try importSampling(destination, URL(fileURLWithPath: args[4]), &peakAnonymous)
    emit(n, "import_s", now() - t, "s", note: "importBundle in a process of its own")
    let sample = try destination.defaultCredential(for: space(n / 2))
    precondition(report.added == n && sample?.password == password(n / 2), "import did not bring every item")
    emit(n, "import_peak_anon_kb", peakAnonymous, "kB", note: "largest RssAnon sampled every 50 ms during the import")
    emitPeakRSS(n, mode)

default:
    usage()
}
