import Foundation
import GRDB
import Testing
@testable import CredentialStore

/// The change log other processes read their notifications from stays short: entries past their
/// retention leave from its head, but never one a watcher may still need.
@Suite struct ChangeLogPruningTests {
    let store: TemporaryStore
    let space = Fixture.space()

    init() throws {
        store = try TemporaryStore()
    }

    /// Appends `count` entries written at `written` (ms since 1970) after the newest one.
    private func appendEntries(_ count: Int, written: Int64) throws {
        try store.rawDatabase().write { db in
            let last = try Int64.fetchOne(db, sql: "SELECT coalesce(max(seq), 0) FROM change_log") ?? 0
            for offset in 1...Int64(count) {
                try db.execute(sql: """
                    INSERT INTO change_log (seq, writer, pid, written, sealed_changes) VALUES (?, x'00', 0, ?, x'00')
                    """, arguments: [last + offset, written])
            }
        }
    }

    private func sequences() throws -> [Int64] {
        try store.rawDatabase().read { try Int64.fetchAll($0, sql: "SELECT seq FROM change_log ORDER BY seq") }
    }

    private var now: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    @Test func entriesPastTheRetentionLeaveUntilTheNewestThousandRemain() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice"), for: space)
        // An old history: every entry so far, and 1,500 more, written a day ago.
        try store.rawDatabase().write { try $0.execute(sql: "UPDATE change_log SET written = ?", arguments: [now - 86_400_000]) }
        try appendEntries(1500, written: now - 86_400_000)

        try storage.set(Fixture.credential("bob"), for: space)

        let remaining = try sequences()
        let newest = try #require(remaining.last)
        #expect(remaining.count == Int(SQLiteAccess.changeLogMinimumEntries))
        #expect(remaining.first == newest - SQLiteAccess.changeLogMinimumEntries + 1)
        #expect(zip(remaining, remaining.dropFirst()).allSatisfy { $0 + 1 == $1 }, "the kept entries are the newest, without gaps")
    }

    @Test func entriesWithinTheRetentionStayHoweverMany() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice"), for: space)
        try appendEntries(2500, written: now)
        let before = try sequences()

        try storage.set(Fixture.credential("bob"), for: space)

        let after = try sequences()
        #expect(Array(after.prefix(before.count)) == before, "no entry younger than the retention was pruned")
        #expect(after.count > before.count)
    }

    @Test func aYoungerEntryAheadHoldsBackOlderOnesAfterTheClockSteppedBack() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice"), for: space)
        // The head is recent; behind it, entries that look older (the clock stepped back).
        try store.rawDatabase().write { try $0.execute(sql: "UPDATE change_log SET written = ?", arguments: [now]) }
        try appendEntries(1500, written: now - 86_400_000)
        let before = try sequences()

        try storage.set(Fixture.credential("bob"), for: space)

        #expect(Array(try sequences().prefix(before.count)) == before)
    }
}
