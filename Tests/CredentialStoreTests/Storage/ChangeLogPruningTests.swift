import Foundation
import GRDB
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// The change log other processes read their notifications from stays short: entries past their
/// retention leave from its head, but never one a watcher may still need.
@Suite struct ChangeLogPruningTests {
    let store: TemporaryStore
    let space = Fixture.space()

    init() throws {
        store = try TemporaryStore()
    }

    /// Appends `count` entries of `changes` changes each, written at `written` (ms since 1970),
    /// after the newest one.
    private func appendEntries(_ count: Int, changes: Int64 = 1, written: Int64) throws {
        try store.rawDatabase().write { db in
            let row = try Row.fetchOne(db, sql: "SELECT seq, change_total FROM change_entries ORDER BY seq DESC LIMIT 1")
            let (last, total): (Int64, Int64) = (row?[0] ?? 0, row?[1] ?? 0)
            for offset in 1...Int64(count) {
                try db.execute(sql: """
                    INSERT INTO change_entries (seq, writer, pid, written, change_total, sealed_changes) VALUES (?, x'00', 0, ?, ?, x'00')
                    """, arguments: [last + offset, written, total + offset * changes])
            }
        }
    }

    private func sequences() throws -> [Int64] {
        try store.rawDatabase().read { try Int64.fetchAll($0, sql: "SELECT seq FROM change_entries ORDER BY seq") }
    }

    private var now: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    @Test func entriesPastTheRetentionLeaveUntilTheNewestThousandRemain() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice"), for: space)
        // An old history: every entry so far, and 1,500 more, written a day ago.
        try store.rawDatabase().write { try $0.execute(sql: "UPDATE change_entries SET written = ?", arguments: [now - 86_400_000]) }
        try appendEntries(1500, written: now - 86_400_000)

        try storage.set(Fixture.credential("bob"), for: space)

        // Each entry above holds one change, and so does bob's set (alice stays the default): the
        // newest thousand changes are in the newest thousand entries.
        let remaining = try sequences()
        let newest = try #require(remaining.last)
        #expect(remaining.count == Int(WritePipeline.changeLogMinimumChanges))
        #expect(remaining.first == newest - WritePipeline.changeLogMinimumChanges + 1)
        #expect(zip(remaining, remaining.dropFirst()).allSatisfy { $0 + 1 == $1 }, "the kept entries are the newest, without gaps")
    }

    @Test func theNewestThousandChangesStayHoweverFewEntriesHoldThem() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice"), for: space)
        // A day-old history: one entry of 2,000 changes (an import), then 600 of one change each.
        try store.rawDatabase().write { try $0.execute(sql: "UPDATE change_entries SET written = ?", arguments: [now - 86_400_000]) }
        try appendEntries(1, changes: 2000, written: now - 86_400_000)
        let importEntry = try #require(try sequences().last)
        try appendEntries(600, written: now - 86_400_000)

        // 602 newer changes: the import's entry still holds some of the newest thousand.
        try storage.set(Fixture.credential("bob"), for: space)
        #expect(try sequences().first == importEntry)

        // 500 more: the newest thousand are all in entries after it, so it goes.
        try appendEntries(500, written: now - 86_400_000)
        try storage.set(Fixture.credential("carol"), for: space)
        #expect(try !sequences().contains(importEntry))
        #expect(try sequences().count == Int(WritePipeline.changeLogMinimumChanges), "one change each: the newest thousand entries")
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
        try store.rawDatabase().write { try $0.execute(sql: "UPDATE change_entries SET written = ?", arguments: [now]) }
        try appendEntries(1500, written: now - 86_400_000)
        let before = try sequences()

        try storage.set(Fixture.credential("bob"), for: space)

        #expect(Array(try sequences().prefix(before.count)) == before)
    }
}
