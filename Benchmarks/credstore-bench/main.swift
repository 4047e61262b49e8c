// Quick in-process timings (issue 7 grows this into the full suite).
//   credstore-bench lookup DIR N LOOKUPS
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

let args = CommandLine.arguments
let dir = URL(fileURLWithPath: args[2])
let n = Int(args[3])!
let lookups = Int(args[4])!
let db = dir.appendingPathComponent("bench-\(n).db")
let keyFile = dir.appendingPathComponent("bench-\(n).key")
var t = now()
let storage = try CredentialStorage(at: db, key: .keyFile(keyFile))
print("open_ms", (now() - t) * 1e3)
if try storage.credentials(for: space(0)).isEmpty {
    t = now()
    for i in 0..<n {
        try storage.set(Credential(user: "user\(i)", password: String(format: "pw%014d", i), persistence: .permanent), for: space(i))
    }
    print("fill_s", now() - t)
}
var samples: [Double] = []
for _ in 0..<lookups {
    let i = Int.random(in: 0..<n)
    let s = space(i)
    t = now()
    let c = try storage.defaultCredential(for: s)
    samples.append(now() - t)
    precondition(c?.password == String(format: "pw%014d", i))
}
print("lookup_med_us", median(samples) * 1e6)
var sets: [Double] = []
for j in 0..<50 {
    t = now()
    try storage.set(Credential(user: "extra\(j)", password: "pw-\(UInt64.random(in: 0...UInt64.max))", persistence: .permanent), for: space(n + j))
    sets.append(now() - t)
}
print("set_med_us", median(sets) * 1e6)
