// In-process timings beside the C reference (issue 7 grows this into the full suite).
//   credstore-bench lookup DIR N LOOKUPS     fill a store of N (once), time defaultCredential(for:) and set
//   credstore-bench import DIR N             export N synchronizable items, time their import into a new store
import CredentialStore
import Foundation

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

func space(_ i: Int) -> ProtectionSpace {
    ProtectionSpace(host: "h\(i).example.com", port: 443, protocol: "https", realm: "realm\(i % 10)")
}

func password(_ i: Int) -> String { String(format: "pw%014d", i) }

func open(_ dir: URL, _ name: String) throws -> CredentialStorage {
    try CredentialStorage(at: dir.appendingPathComponent("\(name).db"), key: .keyFile(dir.appendingPathComponent("\(name).key")))
}

func fill(_ storage: CredentialStorage, _ n: Int, _ persistence: Persistence) throws {
    guard try storage.credentials(for: space(n - 1)).isEmpty else { return }
    let t = now()
    for i in 0..<n {
        try storage.set(Credential(user: "user\(i)", password: password(i), persistence: persistence), for: space(i))
    }
    print("fill_s", now() - t)
}

let args = CommandLine.arguments
let dir = URL(fileURLWithPath: args[2])
let n = Int(args[3])!

switch args[1] {
case "lookup":
    let lookups = Int(args[4])!
    var t = now()
    let storage = try open(dir, "bench-\(n)")
    print("open_ms", (now() - t) * 1e3)
    try fill(storage, n, .permanent)
    var samples: [Double] = []
    for _ in 0..<lookups {
        let i = Int.random(in: 0..<n)
        let s = space(i)
        t = now()
        let c = try storage.defaultCredential(for: s)
        samples.append(now() - t)
        precondition(c?.password == password(i))
    }
    print("lookup_med_us", median(samples) * 1e6)
    var sets: [Double] = []
    for j in 0..<50 {
        t = now()
        try storage.set(Credential(user: "extra\(j)", password: "pw-\(UInt64.random(in: 0...UInt64.max))", persistence: .permanent), for: space(n + j))
        sets.append(now() - t)
    }
    print("set_med_us", median(sets) * 1e6)
case "import":
    let source = try open(dir, "sync-source-\(n)")
    try fill(source, n, .synchronizable)
    let bundle = dir.appendingPathComponent("sync-\(n).csbundle")
    let target = dir.appendingPathComponent("sync-target-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
    let destination = try open(target, "target")
    var t = now()
    try source.exportSynchronizable(to: bundle, protection: .recipients([try destination.devicePublicKey]))
    print("export_s", now() - t)
    try destination.trustDevice(try source.devicePublicKey)
    t = now()
    let report = try destination.importBundle(from: bundle)
    print("import_s", now() - t, "added", report.added)
    let sample = try destination.defaultCredential(for: space(n / 2))
    precondition(report.added == n && sample?.password == password(n / 2))
default:
    print("usage: credstore-bench lookup DIR N LOOKUPS | import DIR N")
}
