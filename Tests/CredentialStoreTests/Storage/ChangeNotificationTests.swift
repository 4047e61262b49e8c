import Foundation
import GRDB
import Synchronization
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// Change notifications of docs/contract.md ("The store"): `changes()` streams, the NotificationCenter post, and changes
/// other processes commit to the same store file.
@Suite struct ChangeNotificationTests {
    let store: TemporaryStore
    let space = Fixture.space()

    init() throws {
        store = try TemporaryStore()
    }

    /// A change as this instance announces it.
    private func local(_ kind: CredentialChange.Kind, _ user: String, _ persistence: Persistence = .permanent, in space: ProtectionSpace? = nil) -> CredentialChange {
        CredentialChange(kind: kind, space: space ?? self.space, user: user, persistence: persistence, origin: .thisProcess)
    }

    /// A change as another process's write is announced.
    private func foreign(_ kind: CredentialChange.Kind, _ user: String, _ persistence: Persistence = .permanent, in space: ProtectionSpace) -> CredentialChange {
        CredentialChange(kind: kind, space: space, user: user, persistence: persistence, origin: .otherProcess)
    }

    /// Every way a change could be printed; none may carry a secret.
    private func renderings(_ change: CredentialChange) -> [String] {
        var dumped = ""
        dump(change, to: &dumped)
        return [String(describing: change), String(reflecting: change), "\(change)", dumped]
    }

    // MARK: This instance's changes

    @Test func aSubscriberHearsAddedDefaultChangedUpdatedAndRemovedInCommitOrderWithoutPasswords() async throws {
        let storage = try store.open()
        let stream = storage.changes()

        try storage.set(Fixture.credential("alice", "alice-secret-1"), for: space)
        try storage.set(Fixture.credential("bob", "bob-secret-1"), for: space)
        try storage.set(Fixture.credential("alice", "alice-secret-2"), for: space)
        try storage.remove(user: "bob", for: space)
        try storage.remove(user: "alice", for: space)

        let changes = await collectArrived(stream, count: 6, timeout: .seconds(5))
        #expect(changes == [
            local(.added, "alice"),
            local(.defaultChanged, "alice"),  // the first credential of the space becomes its default
            local(.added, "bob"),             // the default stays alice's: no second defaultChanged
            local(.updated, "alice"),
            local(.removed, "bob"),
            local(.removed, "alice"),
        ])
        for change in changes {
            for text in renderings(change) {
                #expect(!text.contains("secret"), "a change printed a password: \(text)")
            }
        }
        #expect(try storage.credentials(for: space).isEmpty)
    }

    @Test func aSessionCredentialIsAnnouncedWithItsTier() async throws {
        let storage = try store.open()
        let stream = storage.changes()
        try storage.set(Fixture.credential("alice", "pw", .forSession), for: space)
        try storage.set(Fixture.credential("alice", "pw", .permanent), for: space)
        try storage.remove(user: "alice", for: space)

        #expect(await collectArrived(stream, count: 4, timeout: .seconds(5)) == [
            local(.added, "alice", .forSession),
            local(.defaultChanged, "alice", .forSession),
            local(.updated, "alice", .permanent),  // moving tiers is an update, not remove + add
            local(.removed, "alice", .permanent),
        ])
    }

    @Test func noEventArrivesForANoneSetNorForAnIdenticalReset() async throws {
        let storage = try store.open()
        let stream = storage.changes()
        let alice = Fixture.credential("alice", "pw")
        let carol = Fixture.credential("carol", "session-pw", .forSession)

        try storage.set(alice, for: space)
        try storage.set(carol, for: space)
        #expect(await collectArrived(stream, count: 3, timeout: .seconds(5)) == [
            local(.added, "alice"), local(.defaultChanged, "alice"), local(.added, "carol", .forSession),
        ])

        // None of these changes anything.
        try storage.set(Fixture.credential("bob", "pw", .none), for: space)
        try storage.set(Fixture.credential("alice", "other-pw", .none), for: space)
        try storage.set(Fixture.credential("dave", "pw", .none), for: Fixture.space("none.example.com"))
        try storage.set(alice, for: space)
        try storage.set(Credential(user: "alice", password: "pw", persistence: .permanent), for: Fixture.space("API.Example.COM."))
        try storage.set(carol, for: space)
        try storage.setDefaultCredential(alice, for: space)
        try await Task.sleep(for: .milliseconds(500))

        // The next event is the sentinel's: nothing came in between.
        let sentinelSpace = Fixture.space("sentinel.example.com")
        try storage.set(Fixture.credential("sentinel"), for: sentinelSpace)
        #expect(await collectArrived(stream, count: 2, timeout: .seconds(5)) == [
            local(.added, "sentinel", in: sentinelSpace), local(.defaultChanged, "sentinel", in: sentinelSpace),
        ])
        #expect(try storage.credentials(for: space) == ["alice": alice, "carol": carol])
        #expect(try storage.credentials(for: Fixture.space("none.example.com")).isEmpty)
    }

    @Test func eachOfTwoSubscribersGetsEveryChangeOnce() async throws {
        let storage = try store.open()
        let first = storage.changes()
        let second = storage.changes()

        try storage.set(Fixture.credential("alice", "pw-1"), for: space)
        try storage.set(Fixture.credential("bob", "pw-1"), for: space)
        try storage.set(Fixture.credential("alice", "pw-2"), for: space)
        try storage.remove(user: "bob", for: space)
        // A sentinel last: had anything been delivered twice, it would not arrive where expected.
        let sentinelSpace = Fixture.space("sentinel.example.com")
        try storage.set(Fixture.credential("sentinel"), for: sentinelSpace)

        let expected = [
            local(.added, "alice"), local(.defaultChanged, "alice"), local(.added, "bob"),
            local(.updated, "alice"), local(.removed, "bob"),
            local(.added, "sentinel", in: sentinelSpace), local(.defaultChanged, "sentinel", in: sentinelSpace),
        ]
        async let firstChanges = collectArrived(first, count: expected.count, timeout: .seconds(5))
        async let secondChanges = collectArrived(second, count: expected.count, timeout: .seconds(5))
        let (a, b) = await (firstChanges, secondChanges)
        #expect(a == expected)
        #expect(b == expected)
    }

    @Test func eachChangeIsPostedOnTheDefaultNotificationCenterWithTheStorageAsObject() async throws {
        #expect(Notification.Name.credentialStorageChanged.rawValue == "NSURLCredentialStorageChangedNotification")
        let storage = try store.open()
        let other = try store.open()
        let (posted, continuation) = AsyncStream.makeStream(of: CredentialChange.self, bufferingPolicy: .unbounded)
        let wrongObjects = Counter()
        let token = NotificationCenter.default.addObserver(forName: .credentialStorageChanged, object: storage, queue: nil) { notification in
            guard (notification.object as AnyObject?) === storage,
                  let change = notification.userInfo?[CredentialStorage.changeUserInfoKey] as? CredentialChange
            else {
                wrongObjects.increment()
                return
            }
            continuation.yield(change)
        }
        defer { NotificationCenter.default.removeObserver(token) }

        // No changes() subscriber: the post does not depend on one.
        try storage.set(Fixture.credential("alice", "pw-1"), for: space)
        // Another instance's own post names that instance, so this observer does not see it.
        try other.set(Fixture.credential("zed", "pw"), for: Fixture.space("other.example.com"))
        try storage.set(Fixture.credential("alice", "pw-2"), for: space)
        try storage.remove(user: "alice", for: space)

        #expect(await collectArrived(posted, count: 4, timeout: .seconds(5)) == [
            local(.added, "alice"), local(.defaultChanged, "alice"), local(.updated, "alice"), local(.removed, "alice"),
        ])
        #expect(wrongObjects.value == 0)
    }

    /// `setDefault(user:for:)` and `remove(user:for:)` announce what changed here and log it for
    /// other instances; making the default user the default again changes and announces nothing.
    @Test func setDefaultByUserIsAnnouncedHereAndLoggedForOthers() async throws {
        let storage = try store.open()
        let other = try store.open()
        try storage.set(Fixture.credential("alice", "pw-a"), for: space)
        try storage.set(Fixture.credential("bob", "pw-b"), for: space)
        let mine = storage.changes()
        let theirs = other.changes()

        try storage.setDefault(user: "bob", for: space)
        try storage.setDefault(user: "bob", for: space)
        try storage.remove(user: "alice", for: space)

        #expect(await collectArrived(mine, count: 2, timeout: .seconds(5)) == [local(.defaultChanged, "bob"), local(.removed, "alice")])
        // The other instance hears it from the change log (in this process, so as this process's).
        #expect(await collectArrived(theirs, count: 2, timeout: .seconds(5)) == [local(.defaultChanged, "bob"), local(.removed, "alice")])
        #expect(try other.defaultCredential(for: space)?.user == "bob")
        #expect(try store.open().maintenance.verify().isSound)
    }

    // MARK: Other processes' changes

    @Test func anotherProcessesChangesArriveWithinOneSecondAsOtherProcess() async throws {
        let storage = try store.open()
        let stream = storage.changes()
        // When each change is handed to subscribers: the post follows the streams' yield on the
        // delivery queue, so it times the store, not this test task's scheduling.
        let (delivered, deliveries) = AsyncStream.makeStream(of: (change: CredentialChange, time: ContinuousClock.Instant).self, bufferingPolicy: .unbounded)
        let token = NotificationCenter.default.addObserver(forName: .credentialStorageChanged, object: storage, queue: nil) { notification in
            if let change = notification.userInfo?[CredentialStorage.changeUserInfoKey] as? CredentialChange {
                deliveries.yield((change, ContinuousClock.now))
            }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        let remoteSpace = Fixture.space("remote.example.com")
        let paths = [store.databaseURL.path, store.keyFileURL.path]

        // An add by the helper: added, then defaultChanged, both from the other process.
        let set = try await runHelperOnOwnThread(["set"] + paths + ["remote.example.com", "alice"], input: "remote-secret\n")
        #expect(set.status == 0, "helper set failed: \(set.stderr)")
        let added = await collectArrived(stream, count: 2, timeout: .seconds(5))
        let received = ContinuousClock.now
        #expect(added == [foreign(.added, "alice", in: remoteSpace), foreign(.defaultChanged, "alice", in: remoteSpace)])
        let addedDeliveries = await collectArrived(delivered, count: 2, timeout: .seconds(5))
        #expect(addedDeliveries.map(\.change) == added)
        let addedLatency = try #require(addedDeliveries.last?.time) - set.exited
        #expect(addedLatency < .seconds(1), "the other process's add took \(addedLatency) to be delivered (\(received - set.exited) to this task)")
        #expect(try storage.credentials(for: remoteSpace) == ["alice": Fixture.credential("alice", "remote-secret")])
        for change in added {
            for text in renderings(change) { #expect(!text.contains("remote-secret")) }
        }

        // An identical set, a session-only set that never reaches the disk, and `.none` sets (one
        // that would replace alice's password, one of a new user) announce nothing across
        // processes: the next event is the remove's.
        let same = try await runHelperOnOwnThread(["set"] + paths + ["remote.example.com", "alice"], input: "remote-secret\n")
        #expect(same.status == 0, "helper set failed: \(same.stderr)")
        let session = try await runHelperOnOwnThread(["set"] + paths + ["remote.example.com", "bob", "forSession"], input: "session-secret\n")
        #expect(session.status == 0, "helper set failed: \(session.stderr)")
        let noneOverAlice = try await runHelperOnOwnThread(["set"] + paths + ["remote.example.com", "alice", "none"], input: "none-secret\n")
        #expect(noneOverAlice.status == 0, "helper set failed: \(noneOverAlice.stderr)")
        let noneNewUser = try await runHelperOnOwnThread(["set"] + paths + ["remote.example.com", "carol", "none"], input: "none-secret\n")
        #expect(noneNewUser.status == 0, "helper set failed: \(noneNewUser.stderr)")
        try await Task.sleep(for: .milliseconds(500))
        #expect(try storage.credentials(for: remoteSpace) == ["alice": Fixture.credential("alice", "remote-secret")],
                "the other process's .none sets stored nothing")

        let remove = try await runHelperOnOwnThread(["remove"] + paths + ["remote.example.com", "alice"])
        #expect(remove.status == 0, "helper remove failed: \(remove.stderr)")
        let removed = await collectArrived(stream, count: 1, timeout: .seconds(5))
        #expect(removed == [foreign(.removed, "alice", in: remoteSpace)])
        let removedDeliveries = await collectArrived(delivered, count: 1, timeout: .seconds(5))
        #expect(removedDeliveries.map(\.change) == removed)
        let removedLatency = try #require(removedDeliveries.last?.time) - remove.exited
        #expect(removedLatency < .seconds(1), "the other process's remove took \(removedLatency) to be delivered")
        #expect(try storage.credentials(for: remoteSpace).isEmpty)
    }

    @Test func anotherProcessesChangesArePostedOnTheNotificationCenterWhileSubscribed() async throws {
        let storage = try store.open()
        let stream = storage.changes()  // other processes are watched while a stream is open
        let (posted, continuation) = AsyncStream.makeStream(of: CredentialChange.self, bufferingPolicy: .unbounded)
        let token = NotificationCenter.default.addObserver(forName: .credentialStorageChanged, object: storage, queue: nil) { notification in
            if let change = notification.userInfo?[CredentialStorage.changeUserInfoKey] as? CredentialChange {
                continuation.yield(change)
            }
        }
        defer { NotificationCenter.default.removeObserver(token) }

        let result = try await runHelperOnOwnThread(["set", store.databaseURL.path, store.keyFileURL.path, "remote.example.com", "alice"], input: "pw\n")
        #expect(result.status == 0, "helper set failed: \(result.stderr)")
        let remoteSpace = Fixture.space("remote.example.com")
        let expected = [foreign(.added, "alice", in: remoteSpace), foreign(.defaultChanged, "alice", in: remoteSpace)]
        #expect(await collectArrived(posted, count: 2, timeout: .seconds(5)) == expected)
        #expect(await collectArrived(stream, count: 2, timeout: .seconds(5)) == expected)
    }

    @Test func aFastWriterInAnotherProcessLosesNoChangesAndKeepsItsOrder() async throws {
        let storage = try store.open()
        let stream = storage.changes()
        let count = 1000
        let fill = try await runHelperOnOwnThread(["fill", store.databaseURL.path, store.keyFileURL.path, "bulk", "\(count)"])
        #expect(fill.status == 0, "helper fill failed: \(fill.stderr)")
        let expected = (0..<count).flatMap { index in
            let space = Fixture.space("bulk-\(index).example.com")
            return [foreign(.added, "user", in: space), foreign(.defaultChanged, "user", in: space)]
        }
        let changes = await collectArrived(stream, count: expected.count, timeout: .seconds(5))
        #expect(changes.count == expected.count)
        #expect(changes == expected)
    }

    // MARK: Commit order across processes, and watchers that fall behind

    @Test func anotherProcessesChangeAndThisInstancesLaterChangeArriveInCommitOrder() async throws {
        let storage = try store.open()
        let stream = storage.changes()
        let remoteSpace = Fixture.space("remote.example.com")
        // The other process adds alice and exits, so its commit comes first; then this instance
        // removes her, before the watcher's next poll.
        let set = try await runHelperOnOwnThread(["set", store.databaseURL.path, store.keyFileURL.path, "remote.example.com", "alice"], input: "pw\n")
        #expect(set.status == 0, "helper set failed: \(set.stderr)")
        #expect(try storage.remove(user: "alice", for: remoteSpace))
        #expect(try storage.credentials(for: remoteSpace).isEmpty)

        let received = await collectArrived(stream, count: 3, timeout: .seconds(2))
        // A subscriber that mirrors the store from its events must end with alice gone.
        #expect(received == [
            foreign(.added, "alice", in: remoteSpace),
            foreign(.defaultChanged, "alice", in: remoteSpace),
            local(.removed, "alice", in: remoteSpace),
        ])
    }

    @Test func aWatcherThatFallsBehindStillDeliversEveryChangeOfAnotherProcess() async throws {
        let storage = try store.open()
        let stream = storage.changes()
        // Hold this instance's connection while the other process writes, as a long read, a busy
        // machine or a stopped process would; the watcher resumes once the other process is done.
        let release = DispatchSemaphore(value: 0)
        Thread { _ = try? storage.repository.read { _ in release.wait() } }.start()
        try await Task.sleep(for: .milliseconds(300))
        let fill = try await runHelperOnOwnThread(["fill", store.databaseURL.path, store.keyFileURL.path, "bulk", "600"])
        release.signal()
        #expect(fill.status == 0, "helper fill failed: \(fill.stderr)")
        #expect(try storage.credentials(for: Fixture.space("bulk-0.example.com")).count == 1)

        // Each new space gives an added and a defaultChanged: 1,200 changes, first bulk-0's.
        let received = await collectArrived(stream, count: 1200, timeout: .seconds(2))
        #expect(received.count == 1200)
        #expect(received.first == foreign(.added, "user", in: Fixture.space("bulk-0.example.com")))
    }

    @Test func anotherProcessesImportOfThousandsOfItemsArrivesWholeFromAFewLogEntries() async throws {
        let storage = try store.open()
        let sender = try SyncPeer()
        try storage.sync.trust(try sender.publicKey)
        // 2,500 items: more than two of the change log's batches, so the one transaction's changes
        // span three entries, which the watcher must read whole and once each.
        let count = 2 * WritePipeline.changeLogBatchSize + 452
        let now = nowMillis()
        let items = (0..<count).map { index in
            SignedBundleItem(
                space: Fixture.space("imported-\(index).example.com"), user: "user-\(index)", password: "pw-\(index)", wall: now, counter: Int64(index))
        }
        let bundle = sender.file("thousands.csbundle")
        try sender.storage.writeBundle(items, created: now, for: [storage.sync.deviceKey], to: bundle)
        let entriesBefore = try await store.rawDatabase().read { try Int.fetchOne($0, sql: "SELECT count(*) FROM change_entries") ?? 0 }
        let stream = storage.changes()

        let imported = try await runHelperOnOwnThread(["import", store.databaseURL.path, store.keyFileURL.path, bundle.path])
        #expect(imported.status == 0, "helper import failed: \(imported.stderr)")

        // Announced in the import's order (blind-index order), so compared as a whole.
        let received = await collectArrived(stream, count: count + 1, timeout: .seconds(5))
        #expect(received.count == count, "every imported item announced exactly once")
        let expected = items.map { CredentialChange(kind: .added, space: $0.space, user: $0.user, persistence: .synchronizable, origin: .otherProcess) }
        #expect(Set(received) == Set(expected))
        let entriesAfter = try await store.rawDatabase().read { try Int.fetchOne($0, sql: "SELECT count(*) FROM change_entries") ?? 0 }
        #expect(entriesAfter - entriesBefore == 3, "the transaction's changes are sealed a batch to an entry")
    }
}

// MARK: Support

/// Runs `body` on a thread of its own, outside the cooperative pool (which blocking calls would
/// starve on a small machine), and returns its result.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// `runHelper` on a thread of its own; also when the helper was seen to exit.
func runHelperOnOwnThread(_ arguments: [String], input: String = "") async throws -> (status: Int32, stderr: String, exited: ContinuousClock.Instant) {
    try await onOwnThread {
        let (status, stderr) = try runHelper(arguments, input: input)
        return (status, stderr, ContinuousClock.now)
    }
}

/// A thread-safe count, for observers that run on the delivery queue.
private final class Counter: Sendable {
    private let count = Mutex(0)

    func increment() {
        count.withLock { $0 += 1 }
    }

    var value: Int {
        count.withLock { $0 }
    }
}

/// Like `collect`, but for any stream, and on a timeout returns what did arrive (and ends the stream),
/// so that a failure shows what came.
func collectArrived<Element: Sendable>(_ stream: AsyncStream<Element>, count: Int, timeout: Duration) async -> [Element] {
    let received = Arrived<Element>()
    await withTaskGroup(of: Void.self) { group in
        group.addTask {
            for await change in stream where received.append(change) >= count {
                break
            }
        }
        group.addTask { try? await Task.sleep(for: timeout) }
        await group.next()
        group.cancelAll()
    }
    return received.changes
}

private final class Arrived<Element: Sendable>: Sendable {
    private let list = Mutex<[Element]>([])

    /// Adds `element`; how many have arrived.
    func append(_ element: Element) -> Int {
        list.withLock { $0.append(element); return $0.count }
    }

    var changes: [Element] {
        list.withLock { $0 }
    }
}
