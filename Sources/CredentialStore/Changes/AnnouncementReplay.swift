import Synchronization

/// This instance's announcements of a write that announced more than ``Mutation/announcementCap``
/// changes, read back after the commit from the write's own change-log entries, one entry (up to
/// 1,024 changes) at a time, instead of kept in memory through the whole transaction.
///
/// Nearly every announcement repeats the change logged just before it; the ``Plan`` keeps only
/// how the two differ: the logged changes nobody here is told of (a credential moved to the
/// session tier), and the announcements the log does not hold (session-tier changes), each with
/// its place. Replaying the log through the plan gives the announcements in their order.
final class AnnouncementReplay: Sendable {
    /// How a write's announcements differ from its logged changes.
    struct Plan: Sendable {
        /// How many changes the write logged, and how many it announced.
        var loggedCount = 0
        var announcementCount = 0
        /// The indexes (in log order) of logged changes that are not announced, ascending.
        var unannounced: [Int] = []
        /// The announcements that are not the change logged just before them, with their index
        /// among the announcements.
        var unlogged: [(position: Int, change: CredentialChange)] = []
    }

    private struct State {
        /// The last sequence number read.
        var sequence: Int64
        var logIndex = 0
        var position = 0
        var nextUnannounced = 0
        var nextUnlogged = 0
        var done = false
    }

    private let plan: Plan
    private let origin: CredentialChange.Origin
    private let last: Int64
    private let entry: @Sendable (_ after: Int64) throws -> (sequence: Int64, changes: [CredentialChange]?)?
    private let state: Mutex<State>

    /// - Parameters:
    ///   - sequences: the write's own change-log entries.
    ///   - entry: reads the change-log entry after a sequence number: its sequence number and
    ///     its changes, nil when it is not this write's or does not open; nil for no entry, or
    ///     once the store is closed.
    init(
        plan: Plan, origin: CredentialChange.Origin, sequences: ClosedRange<Int64>?,
        entry: @escaping @Sendable (_ after: Int64) throws -> (sequence: Int64, changes: [CredentialChange]?)?
    ) {
        self.plan = plan
        self.origin = origin
        self.last = sequences?.upperBound ?? 0
        self.entry = entry
        self.state = Mutex(State(sequence: (sequences?.lowerBound ?? 1) - 1, done: sequences == nil))
    }

    /// The next announcements, in order; nil once all are given.
    ///
    /// Throws when the log no longer holds one of the write's entries (pruned by another process
    /// after the retention, or unreadable): the rest is then not announced.
    func next() throws -> [CredentialChange]? {
        try state.withLock { state -> [CredentialChange]? in
            var batch: [CredentialChange] = []
            func placeUnlogged() {
                while state.nextUnlogged < plan.unlogged.count, plan.unlogged[state.nextUnlogged].position == state.position {
                    batch.append(plan.unlogged[state.nextUnlogged].change)
                    state.nextUnlogged += 1
                    state.position += 1
                }
            }
            guard !state.done else {
                // What is left: announcements after the last logged change.
                placeUnlogged()
                return batch.isEmpty ? nil : batch
            }
            guard let entry = try entry(state.sequence), entry.sequence == state.sequence + 1, entry.sequence <= last,
                  let changes = entry.changes
            else {
                state.done = true
                throw CredentialStorageError(.io, "the change log no longer holds this write's changes after \(state.sequence)")
            }
            state.sequence = entry.sequence
            if state.sequence == last { state.done = true }
            batch.reserveCapacity(changes.count)
            for change in changes {
                defer { state.logIndex += 1 }
                if state.nextUnannounced < plan.unannounced.count, plan.unannounced[state.nextUnannounced] == state.logIndex {
                    state.nextUnannounced += 1
                    continue
                }
                placeUnlogged()
                var announced = change
                announced.origin = origin
                batch.append(announced)
                state.position += 1
            }
            if state.done { placeUnlogged() }
            return batch
        }
    }
}
