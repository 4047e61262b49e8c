@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// docs/contract.md ("Sync between machines"), "import is atomic": a process killed (SIGKILL) in the middle of importing a large
/// bundle leaves the store as it was before the import or as it is after it, never in between,
/// and the store stays sound.
@Suite(.cheapKeyDerivation) struct SyncCrashTests {
    static let oldCount = LargeImport.oldCount
    static let newCount = LargeImport.newCount

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
            try LargeImport.prepare(storage, trusting: sender.storage)
            recipient = try storage.sync.deviceKey
        }
        template.waitUntilClosed()
    }

    /// A bundle signed by the sender for the template: `newCount` new items, and a new password
    /// for every old synchronizable item.
    private func largeBundle() throws -> URL {
        let bundle = sender.file("large.csbundle")
        try LargeImport.writeBundle(from: sender.storage, for: recipient, to: bundle)
        return bundle
    }

    static func space(_ index: Int) -> ProtectionSpace {
        LargeImport.space(index)
    }

    /// A fresh copy of the template store, in its own folder.
    private func copyOfTemplate() throws -> TemporaryStore {
        try template.copy()
    }

    /// Starts the helper importing `bundle` into `store`.
    private func startImport(_ bundle: URL, into store: TemporaryStore) throws -> ChildProcess {
        try ChildProcess(helperExecutable(), ["import", store.databaseURL.path, store.keyFileURL.path, bundle.path])
    }

    enum Outcome: Equatable {
        case old, new
    }

    /// Opens the store, checks it is sound, and says which whole state it holds.
    private func inspect(_ store: TemporaryStore, sourceLocation: SourceLocation = #_sourceLocation) throws -> Outcome? {
        let storage = try store.open()
        let report = try storage.maintenance.verify()
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
        let imported = try startImport(bundle, into: complete).wait()
        let duration = Date().timeIntervalSince(started)
        try #require(imported.status == 0 && !imported.killedBySignal, "the helper's import failed: \(imported.stderr)")
        #expect(try inspect(complete) == .new)

        // Kills spread over the import's duration, each a little randomised.
        var outcomes: [Outcome?] = []
        for fraction in [0.1, 0.3, 0.5, 0.7, 0.9, 0.98] {
            let store = try copyOfTemplate()
            let delay = duration * (fraction + Double.random(in: -0.05...0.05))
            let process = try startImport(bundle, into: store)
            usleep(useconds_t(max(0, delay) * 1_000_000))
            process.kill()
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
        let hostile = sender.file("counter.csbundle")
        try sender.storage.writeBundle(
            [SignedBundleItem(space: Self.space(0), user: "overflow", password: "x", wall: nowMillis() + 3_600_000, counter: .max)],
            for: [recipient], to: hostile)

        let store = try copyOfTemplate()
        let result = try startImport(hostile, into: store).wait()
        #expect(!result.killedBySignal, "the importer died of signal \(result.status)")
        #expect(result.status != 0, "the hostile bundle is refused")
        #expect(try inspect(store) == .old || result.status == 0)
    }
}
