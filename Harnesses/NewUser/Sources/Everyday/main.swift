// What everyday use of the library must never lose, tried from a package outside credstore that
// depends on it by path, as an app does:
//
//     Everyday STORE_FOLDER
//
// Prints one line per check, `ok NAME` or `FAIL NAME: why`, and exits 1 if any failed.
import CredentialStore
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: Everyday STORE_FOLDER\n".utf8))
    exit(64)
}
let folder = URL(fileURLWithPath: arguments[1], isDirectory: true)
var failures = 0

/// Runs one check and prints its line; 1 when it failed, else 0.
func check(_ name: String, _ body: () throws -> String?) -> Int {
    do {
        if let why = try body() {
            print("FAIL \(name): \(why)")
            return 1
        }
        print("ok \(name)")
        return 0
    } catch {
        print("FAIL \(name): \(error)")
        return 1
    }
}

/// The store named `name` inside `folder`, created on first use.
@Sendable func open(_ name: String, in folder: URL) throws -> CredentialStorage {
    let store = folder.appendingPathComponent(name, isDirectory: true)
    return try CredentialStorage(
        at: StoreLocation(databaseURL: store.appendingPathComponent("credentials.db")),
        options: StorageOptions(rollbackAnchor: .directory(folder.appendingPathComponent("anchors"))))
}

let space = try ProtectionSpace(url: URL(string: "https://a.example.com")!)

// A new password keeps the tier and the details the write does not name.
failures += check("a-new-password-keeps-tier-and-details") {
    let storage = try open("keeps", in: folder)
    try storage.set(Credential(user: "u", password: "old", persistence: .synchronizable, label: "L1", attributes: ["env": "prod"]), for: space)
    try storage.set(Credential(user: "u", password: "new"), for: space)
    guard let stored = try storage.credentials(for: space)["u"] else { return "the credential is gone" }
    if stored.password != "new" { return "the password was not replaced" }
    if stored.persistence != .synchronizable { return "the tier became \(stored.persistence)" }
    if stored.label != "L1" || stored.attributes != ["env": "prod"] { return "the details were dropped" }
    return nil
}

// Leaving the synchronizable tier is a removal from the fleet: it needs consent.
failures += check("leaving-sync-needs-consent") {
    let storage = try open("consent", in: folder)
    try storage.set(Credential(user: "u", password: "pw", persistence: .synchronizable), for: space)
    do {
        try storage.set(Credential(user: "u", password: "pw2", persistence: .permanent), for: space)
        return "moved out of the synchronizable tier without consent"
    } catch let error as CredentialStorageError where error.code == .synchronizableRemovalNeedsOption {}
    try storage.set(Credential(user: "u", password: "pw2", persistence: .permanent), for: space, options: .removeSynchronizable)
    return try storage.credentials(for: space)["u"]?.persistence == .permanent ? nil : "the confirmed move did not happen"
}

// Details change, and clear, without the password.
failures += check("update-changes-details-without-the-password") {
    let storage = try open("update", in: folder)
    try storage.set(Credential(user: "u", password: "pw", label: "L1", comment: "c"), for: space)
    try storage.update(user: "u", for: space) { credential in
        credential.label = nil
        credential.attributes["team"] = "infra"
    }
    guard let stored = try storage.credentials(for: space)["u"] else { return "the credential is gone" }
    if stored.password != "pw" || stored.comment != "c" { return "kept fields changed" }
    return stored.label == nil && stored.attributes == ["team": "infra"] ? nil : "the update was not applied"
}

// An expired credential is no default, the listing agrees, and it is still there to renew.
failures += check("an-expired-credential-is-no-default-and-the-listing-agrees") {
    let storage = try open("expired", in: folder)
    try storage.set(Credential(user: "u", password: "old", expires: Date(timeIntervalSince1970: 1_000_000_000)), for: space)
    if try storage.defaultCredential(for: space) != nil { return "an expired credential answered" }
    guard let entry = try storage.entries().first(where: { $0.user == "u" }) else { return "the listing lost it" }
    if entry.isDefault { return "the listing calls an expired credential the default" }
    if try storage.credentials(for: space)["u"]?.password != "old" { return "the expired credential is gone" }
    try storage.set(Credential(user: "u", password: "new"), for: space)
    return try storage.defaultCredential(for: space)?.password == "new" ? nil : "the renewed password does not answer"
}

// A backup taken through the library comes back whole, with details and the default, elsewhere.
failures += check("a-backup-restores-whole-into-a-new-place") {
    let storage = try open("backed-up", in: folder)
    try storage.set(Credential(user: "u", password: "pw", persistence: .synchronizable, label: "L1", attributes: ["env": "prod"]), for: space)
    try storage.set(Credential(user: "v", password: "pv"), for: space)
    try storage.setDefault(user: "v", for: space)
    let file = folder.appendingPathComponent("store.backup")
    try storage.maintenance.backup(to: file, passphrase: "backup passphrase")
    let target = folder.appendingPathComponent("restored", isDirectory: true)
    let report = try StoreFile.restore(
        from: file, passphrase: "backup passphrase", to: target.appendingPathComponent("credentials.db"),
        key: .keyFile(target.appendingPathComponent("store.key")), rollbackAnchor: .directory(folder.appendingPathComponent("anchors")))
    if report.restored.count != 2 { return "\(report.restored.count) of 2 credentials restored" }
    let restored = try open("restored", in: folder)
    guard let u = try restored.credentials(for: space)["u"] else { return "u is missing" }
    if u.password != "pw" || u.persistence != .synchronizable || u.label != "L1" || u.attributes != ["env": "prod"] {
        return "u came back changed"
    }
    if try restored.defaultCredential(for: space)?.user != "v" { return "the default choice was lost" }
    return try restored.maintenance.verify().isSound ? nil : "the restored store does not verify"
}

// Eight threads opening a store that does not exist yet: one store, every write kept.
failures += check("first-use-from-many-threads") {
    let errors = ErrorBox()
    let (folder, space) = (folder, space)
    DispatchQueue.concurrentPerform(iterations: 8) { index in
        do {
            try open("first-use", in: folder).set(Credential(user: "user\(index)", password: "pw\(index)"), for: space)
        } catch {
            errors.append("\(error)")
        }
    }
    if let first = errors.all.first { return first }
    let count = try open("first-use", in: folder).credentials(for: space).count
    return count == 8 ? nil : "\(count) of 8 credentials"
}

// An expiry outside 1970 through 9999 is refused as bad input, and the store's listings still work.
failures += check("an-expiry-out-of-range-is-refused") {
    let storage = try open("expiry", in: folder)
    try storage.set(Credential(user: "kept", password: "pw", expires: Date(timeIntervalSince1970: 4_102_444_800)), for: space)
    for seconds in [9.2e18, 1e15, -1, 253_402_300_800] {
        do {
            try storage.set(Credential(user: "far", password: "pw", expires: Date(timeIntervalSince1970: seconds)), for: space)
            return "an expiry \(seconds) s after 1970 was stored"
        } catch let error as CredentialStorageError where error.code == .invalidInput {
        }
    }
    let entries = try storage.entries()
    if entries.map(\.user) != ["kept"] { return "the store holds \(entries.map(\.user))" }
    return nil
}

// A URL is read as a browser reads it: a password, an encoded host or a user before `@` never
// files a credential under some other host.
failures += check("a-url-that-hides-its-host-is-refused") {
    let storage = try open("urls", in: folder)
    for text in ["https://user:pw@evil.example.com/", "https://%65vil.example.com/", "https://bank.example.com@evil.example.com/"] {
        guard let url = URL(string: text) else { continue }
        do {
            let space = try ProtectionSpace(url: url)
            try storage.set(Credential(user: "u", password: "pw"), for: space)
            return "\(text) was read as \(space.host)"
        } catch let error as CredentialStorageError where [.invalidInput, .invalidProtectionSpace].contains(error.code) {
        }
    }
    return try storage.entries().isEmpty ? nil : "a credential was stored"
}

/// Errors collected from several threads.
final class ErrorBox: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [String] = []
    func append(_ error: String) { lock.withLock { errors.append(error) } }
    var all: [String] { lock.withLock { errors } }
}

exit(failures > 0 ? 1 : 0)
