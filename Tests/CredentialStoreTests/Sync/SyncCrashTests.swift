import Foundation
import Testing
@testable import CredentialStore
#if canImport(Glibc)
import Glibc
#endif

/// docs/contract.md ("Sync between machines"), "import is atomic": a process killed (SIGKILL) in the middle of importing a large
/// bundle leaves the store as it was before the import or as it is after it, never in between,
/// and the store stays sound.
@Suite struct SyncCrashTests {
    static let oldCount = 40
    static let newCount = 20_000

    /// A store pre-filled with synchronizable and permanent credentials, closed, to copy from.
    let template: TemporaryStore
    /// The device whose bundles the template trusts.
    let sender: SyncPeer
    /// The template store's device key.
    let recipient: DeviceKey

    init() throws {
        template = try TemporaryStore()
        sender = try SyncPeer()
        do {
            let storage = try template.open()
            try storage.trustDevice(try sender.publicKey)
            for index in 0..<Self.oldCount {
                try storage.set(Credential(user: "old-user-\(index)", password: "old-\(index)", persistence: .synchronizable), for: Self.space(index))
            }
            for index in 0..<10 {
                try storage.set(Credential(user: "kept-\(index)", password: "kept-\(index)", persistence: .permanent), for: Self.space(index))
            }
            recipient = try storage.deviceIdentity().publicKey
        }
        template.waitUntilClosed()
    }

    /// A bundle signed by the sender for the template: `newCount` new items, and a new password
    /// for every old synchronizable item.
    private func largeBundle() throws -> URL {
        let senderDevice = try sender.storage.deviceIdentity()
        let now = nowMillis()
        var items: [BundleItem] = []
        items.reserveCapacity(Self.newCount + Self.oldCount)
        for index in 0..<Self.oldCount {
            items.append(BundleItem(
                space: Self.space(index), user: "old-user-\(index)",
                stamp: HybridTimestamp(wall: now + 1000, counter: Int64(index), device: senderDevice.deviceID), password: "new-\(index)"))
        }
        for index in 0..<Self.newCount {
            items.append(BundleItem(
                space: Self.space(index), user: "new-user-\(index)",
                stamp: HybridTimestamp(wall: now + 1000, counter: Int64(index), device: senderDevice.deviceID), password: "pw-\(index)"))
        }
        let contents = BundleContents(senderDevice: senderDevice.deviceID, signer: senderDevice.publicKey, created: now, items: items, defaults: [])
        let bundle = sender.file("large.csbundle")
        try Data(try BundleFormat.write(contents, protection: .recipients([recipient]), signer: senderDevice)).write(to: bundle)
        return bundle
    }

    static func space(_ index: Int) -> ProtectionSpace {
        Fixture.space("crash-\(index % 250).example.com", realm: "R\(index % 3)")
    }

    /// A fresh copy of the template store, in its own folder.
    private func copyOfTemplate() throws -> TemporaryStore {
        let copy = try TemporaryStore()
        try FileManager.default.createDirectory(at: copy.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for (source, target) in [(template.databaseURL, copy.databaseURL), (template.keyFileURL, copy.keyFileURL)] {
            try FileManager.default.copyItem(at: source, to: target)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: target.path)
        }
        return copy
    }

    /// Starts the helper importing `bundle` into `store`.
    private func startImport(_ bundle: URL, into store: TemporaryStore) throws -> Process {
        let process = Process()
        process.executableURL = helperExecutable()
        process.arguments = ["import", store.databaseURL.path, store.keyFileURL.path, bundle.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    enum Outcome: Equatable {
        case old, new
    }

    /// Opens the store, checks it is sound, and says which whole state it holds.
    private func inspect(_ store: TemporaryStore, sourceLocation: SourceLocation = #_sourceLocation) throws -> Outcome? {
        let storage = try store.open()
        let report = try storage.verify()
        #expect(report.isSound, "\(report.problems)", sourceLocation: sourceLocation)
        let all = try storage.allCredentials().values.flatMap(\.values)
        let synchronizable = all.filter { $0.persistence == .synchronizable }
        #expect(all.filter { $0.persistence == .permanent }.count == 10, "the permanent credentials are untouched", sourceLocation: sourceLocation)
        let oldPasswords = synchronizable.filter { $0.user.hasPrefix("old-user-") }.map(\.password)
        switch synchronizable.count {
        case Self.oldCount:
            #expect(oldPasswords.allSatisfy { $0.hasPrefix("old-") }, "the old state, whole", sourceLocation: sourceLocation)
            return .old
        case Self.oldCount + Self.newCount:
            #expect(oldPasswords.count == Self.oldCount && oldPasswords.allSatisfy { $0.hasPrefix("new-") }, "the new state, whole",
                    sourceLocation: sourceLocation)
            return .new
        default:
            Issue.record("\(synchronizable.count) synchronizable credentials: neither \(Self.oldCount) nor \(Self.oldCount + Self.newCount)",
                         sourceLocation: sourceLocation)
            return nil
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func aKilledImportLeavesTheOldOrTheNewStateAndASoundStore() throws {
        let bundle = try largeBundle()
        // A complete import first, to time it.
        let complete = try copyOfTemplate()
        #expect(try inspect(complete) == .old)
        complete.waitUntilClosed()
        let started = Date()
        let process = try startImport(bundle, into: complete)
        process.waitUntilExit()
        let duration = Date().timeIntervalSince(started)
        try #require(process.terminationStatus == 0, "the helper's import failed")
        #expect(try inspect(complete) == .new)

        // Kills spread over the import's duration, each a little randomised.
        var outcomes: [Outcome?] = []
        for fraction in [0.1, 0.3, 0.5, 0.7, 0.9, 0.98] {
            let store = try copyOfTemplate()
            let delay = duration * (fraction + Double.random(in: -0.05...0.05))
            let process = try startImport(bundle, into: store)
            usleep(useconds_t(max(0, delay) * 1_000_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            outcomes.append(try inspect(store))
        }
        #expect(!outcomes.contains(nil))
        // Where the kills landed, for the log; the property is the absence of any third state.
        let landed = outcomes.map { $0.map { "\($0)" } ?? "torn" }.joined(separator: ", ")
        print("import of \(Self.newCount + Self.oldCount) items took \(String(format: "%.2f", duration)) s; after the kills: \(landed)")
    }

    @Test func aTrustedBundleWithAnExhaustedClockCounterIsRefusedWithoutCrashingTheImporter() throws {
        // A bundle from a trusted device (or anyone with a bundle passphrase) whose stamp counter is
        // Int64.max: the clock must not overflow (a trap kills the importing process).
        let device = try sender.storage.deviceIdentity()
        let stamp = HybridTimestamp(wall: nowMillis() + 3_600_000, counter: .max, device: device.deviceID)
        let contents = BundleContents(
            senderDevice: device.deviceID, signer: device.publicKey, created: nowMillis(),
            items: [BundleItem(space: Self.space(0), user: "overflow", stamp: stamp, password: "x")], defaults: [])
        let hostile = sender.file("counter.csbundle")
        try Data(try BundleFormat.write(contents, protection: .recipients([recipient]), signer: device)).write(to: hostile)

        let store = try copyOfTemplate()
        let process = try startImport(hostile, into: store)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit, "the importer died of signal \(process.terminationStatus)")
        #expect(process.terminationStatus != 0, "the hostile bundle is refused")
        #expect(try inspect(store) == .old || process.terminationStatus == 0)
    }
}
