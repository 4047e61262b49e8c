import Foundation
import Synchronization
import Testing
@testable import CredentialStore
import CredentialStoreTestSupport

/// An import that changes more than a write keeps in memory to announce (``Mutation/announcementCap``,
/// lowered here to a few changes) still announces every change to this process's subscribers and
/// observers, once each, in order, and before the changes of a later write.
@Suite struct LargeImportAnnouncementTests {
    private func space(_ index: Int) -> ProtectionSpace {
        ProtectionSpace(host: "host\(index % 7).example.com", port: 443, protocol: "https", realm: nil, authenticationMethod: nil)
    }

    @Test func anImportOfMoreChangesThanTheCapAnnouncesEachOnceInOrder() async throws {
        let sender = try SyncPeer()
        // The reference is a copy of the same store (same keys, so the import merges in the same
        // order), announcing from memory; both hold a session credential the bundle overwrites
        // and a permanent default.
        let template = try TemporaryStore()
        do {
            let storage = try template.open()
            _ = try storage.sync.deviceKey  // the copy opens bundles sealed to this key too
            try storage.sync.trust(try sender.publicKey)
            try storage.set(Credential(user: "kept", password: "local", persistence: .permanent), for: space(4))
        }
        let copy = try template.copy()
        let capped = try template.open()
        let reference = try copy.open()
        for storage in [capped, reference] {
            try storage.set(Credential(user: "user-3", password: "session", persistence: .forSession), for: space(3))
        }
        let now = nowMillis()
        let items = (0..<300).map { index in
            SignedBundleItem(space: space(index), user: "user-\(index)", password: "pw-\(index)", wall: now, counter: Int64(index))
        }
        let defaults = (0..<7).map { index in SignedBundleDefault(space: space(index), user: "user-\(index + 7)", wall: now, counter: 0) }
        let bundle = sender.file("large.csbundle")
        try sender.storage.writeBundle(items, defaults: defaults, for: [try capped.sync.deviceKey], to: bundle)

        capped.announcementCap = 16
        let cappedStream = capped.changes()
        let referenceStream = reference.changes()
        let observed = Observed()
        let token = NotificationCenter.default.addObserver(forName: .credentialStorageChanged, object: capped, queue: nil) { note in
            if let change = note.userInfo?[CredentialStorage.changeUserInfoKey] as? CredentialChange { observed.append(change) }
        }
        defer { NotificationCenter.default.removeObserver(token) }

        #expect(try capped.sync.importBundle(from: bundle) == ImportReport(added: 299, updated: 1))
        #expect(try reference.sync.importBundle(from: bundle) == ImportReport(added: 299, updated: 1))
        // A later write's change comes after every change of the import.
        let later = Credential(user: "later", password: "pw", persistence: .permanent)
        try capped.set(later, for: space(0))
        try reference.set(later, for: space(0))

        let expected = await collectArrived(referenceStream, count: 400, timeout: .seconds(3))
        // 300 credentials (user-3's an update of its session credential), the defaults the
        // bundle moved, and the later write.
        #expect(expected.count > 301)
        #expect(Set(expected).count == expected.count)
        #expect(expected.last == CredentialChange(kind: .added, space: space(0), user: "later", persistence: .permanent, origin: .thisProcess))
        #expect(expected.contains(CredentialChange(
            kind: .updated, space: space(3), user: "user-3", persistence: .synchronizable, origin: .syncImport)))
        let heard = await collectArrived(cappedStream, count: 400, timeout: .seconds(3))
        #expect(heard == expected)
        #expect(observed.changes == expected)
    }

    /// With no room at all, every write announces from the log, including the changes the log
    /// does not hold (session-tier ones) and the logged ones nobody here hears of.
    @Test func everyKindOfWriteAnnouncesTheSameFromTheLogAsFromMemory() async throws {
        func run(cap: Int?) async throws -> [CredentialChange] {
            let store = try TemporaryStore()
            let storage = try store.open()
            if let cap { storage.announcementCap = cap }
            let stream = storage.changes()
            let space = space(0)
            try storage.set(Credential(user: "alice", password: "a1", persistence: .permanent), for: space)
            try storage.set(Credential(user: "bob", password: "b1", persistence: .permanent), for: space)
            try storage.set(Credential(user: "alice", password: "a2", persistence: .forSession), for: space)
            try storage.setDefaultCredential(Credential(user: "bob", password: "b2", persistence: .permanent), for: space)
            try storage.remove(user: "alice", for: space)
            try storage.set(Credential(user: "carol", password: "c1", persistence: .forSession), for: space)
            return await collectArrived(stream, count: 50, timeout: .seconds(2))
        }
        let fromMemory = try await run(cap: nil)
        #expect(fromMemory.count >= 6)
        #expect(try await run(cap: 0) == fromMemory)
    }
}

private final class Observed: Sendable {
    private let list = Mutex<[CredentialChange]>([])
    func append(_ change: CredentialChange) { list.withLock { $0.append(change) } }
    var changes: [CredentialChange] { list.withLock { $0 } }
}
