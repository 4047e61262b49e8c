import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import Dispatch
import Foundation
import Logging
import Synchronization

/// Hands each effective change to every `changes()` subscriber and to `NotificationCenter`, in
/// commit order, and watches the store file for changes that other processes commit.
///
/// Delivery runs on one serial queue, never on the writer: a subscriber or observer that writes
/// to the store from its handler cannot deadlock it.
final class ChangeHub: Sendable {
    /// How often the change log is polled while anyone subscribes. A fifth of a second keeps
    /// other processes' changes well inside the one-second promise for the cost of one indexed
    /// `max(seq)` query per tick.
    static let pollInterval: DispatchTimeInterval = .milliseconds(200)

    private struct State {
        var subscribers: [UInt64: AsyncStream<CredentialChange>.Continuation] = [:]
        var nextID: UInt64 = 0
        var watcher: (any DispatchSourceTimer)?
        var lastSequence: Int64 = 0
    }

    private let state = Mutex(State())
    private let delivery = DispatchQueue(label: "credstore.changes.delivery")
    private let watcherQueue = DispatchQueue(label: "credstore.changes.watcher", qos: .utility)
    private let latestSequence: @Sendable () throws -> Int64
    private let loggedChanges: @Sendable (Int64) throws -> LoggedChanges
    private let logger: Logger

    /// Other writers' changes read from the change log, with the range of sequence numbers read.
    struct LoggedChanges: Sendable {
        var changes: [(sequence: Int64, change: CredentialChange)]
        /// The lowest and highest sequence numbers read, this instance's own entries included.
        var first: Int64?
        var last: Int64?
        /// Other writers' entries that did not open under the current keys.
        var unopened: Int
    }

    /// - Parameters:
    ///   - latestSequence: the change log's newest sequence number.
    ///   - loggedChanges: other writers' changes after a sequence number.
    init(
        logger: Logger,
        latestSequence: @escaping @Sendable () throws -> Int64,
        loggedChanges: @escaping @Sendable (Int64) throws -> LoggedChanges
    ) {
        self.logger = logger
        self.latestSequence = latestSequence
        self.loggedChanges = loggedChanges
    }

    deinit {
        state.withLock { $0.watcher?.cancel() }
    }

    /// A new stream of changes; the watcher for other processes runs while any stream is open.
    func subscribe() -> AsyncStream<CredentialChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: CredentialChange.self, bufferingPolicy: .unbounded)
        // Read the log's position before registering, so a foreign change committed right after
        // this call is still delivered.
        let start = (try? latestSequence()) ?? 0
        let id: UInt64 = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = continuation
            if state.watcher == nil {
                state.lastSequence = start
                state.watcher = startWatcher()
            }
            return id
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return stream
    }

    private func unsubscribe(_ id: UInt64) {
        state.withLock { state in
            state.subscribers[id] = nil
            if state.subscribers.isEmpty {
                state.watcher?.cancel()
                state.watcher = nil
            }
        }
    }

    /// The sequence number delivered up to, while other processes are watched; nil otherwise.
    /// A writer reads the log after it, inside its transaction, to deliver earlier commits first.
    var watchedSequence: Int64? {
        state.withLock { $0.watcher == nil ? nil : $0.lastSequence }
    }

    /// Delivers, in commit order, other writers' logged changes not delivered yet and then this
    /// instance's own changes of one transaction, and advances the delivered position to `through`.
    ///
    /// The poller and the writer both come through here; the lock makes the position and the
    /// queueing one step, so nothing is delivered twice or overtaken.
    ///
    /// A write that announced more than ``Mutation/announcementCap`` changes hands a `replay`
    /// instead of `local`: its changes are read back from the change log on the delivery queue,
    /// an entry at a time, after the others' and before any later write's.
    func deliver(
        logged: [(sequence: Int64, change: CredentialChange)], local: [CredentialChange], replay: AnnouncementReplay? = nil,
        through sequence: Int64?
    ) {
        state.withLock { state in
            let fresh = logged.filter { $0.sequence > state.lastSequence }.map(\.change)
            if let sequence { state.lastSequence = max(state.lastSequence, sequence) }
            let subscribers = Array(state.subscribers.values)
            enqueue(fresh + local, to: subscribers)
            guard let replay else { return }
            let (logger, owner) = (logger, owner.withLock { $0 })
            delivery.async {
                do {
                    // Once the store is let go with no subscriber left, nobody is there to hear the rest.
                    while !subscribers.isEmpty || owner?.storage != nil, let batch = try replay.next() {
                        Self.post(batch, to: subscribers, owner: owner)
                    }
                } catch {
                    logger.warning("could not announce all of a large write's changes: \(error)")
                }
            }
        }
    }

    /// The delivery holds the storage weakly: announcing must never keep a store (and its
    /// database connection) open after its last user let go of it.
    private func enqueue(_ changes: [CredentialChange], to subscribers: [AsyncStream<CredentialChange>.Continuation]) {
        guard !changes.isEmpty else { return }
        let owner = owner.withLock { $0 }
        delivery.async { Self.post(changes, to: subscribers, owner: owner) }
    }

    /// Hands `changes` to the subscribers and to `NotificationCenter`; on the delivery queue.
    private static func post(
        _ changes: [CredentialChange], to subscribers: [AsyncStream<CredentialChange>.Continuation], owner: WeakBox?
    ) {
        for change in changes {
            for subscriber in subscribers { subscriber.yield(change) }
            if let storage = owner?.storage {
                NotificationCenter.default.post(
                    name: .credentialStorageChanged, object: storage,
                    userInfo: [CredentialStorage.changeUserInfoKey: change])
            }
        }
    }

    private func startWatcher() -> any DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: watcherQueue)
        timer.schedule(deadline: .now() + Self.pollInterval, repeating: Self.pollInterval, leeway: .milliseconds(20))
        timer.setEventHandler { [weak self] in self?.poll() }
        timer.resume()
        return timer
    }

    /// Set by the storage once it exists, so the watcher can post with it as the object.
    private let owner = Mutex<WeakBox?>(nil)

    func attach(_ storage: CredentialStorage) {
        owner.withLock { $0 = WeakBox(storage) }
    }

    private func poll() {
        let since = state.withLock { $0.lastSequence }
        do {
            guard try latestSequence() > since else { return }
            let read = try loggedChanges(since)
            if let first = read.first, since > 0, first > since + 1 {
                logger.warning("missed \(first - since - 1) change-log entries of other processes: this process fell behind the change log's retention")
            }
            if read.unopened > 0 {
                // Sealed under a root key rotated away since (or altered): their changes, up to a
                // batch each, go unannounced.
                logger.warning("\(read.unopened) change-log entries of other processes did not open; their changes are not announced")
            }
            deliver(logged: read.changes, local: [], through: read.last)
        } catch {
            logger.warning("could not read the change log: \(error)")
        }
    }
}

private final class WeakBox: Sendable {
    // A weak reference is safe to share: reading it is atomic.
    nonisolated(unsafe) weak var storage: CredentialStorage?

    init(_ storage: CredentialStorage) {
        self.storage = storage
    }
}
