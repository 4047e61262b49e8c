import Foundation
import Synchronization
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// docs/contract.md ("The store"): one storage shared by many threads, and several processes on one store file, without
/// errors or lost writes.
@Suite struct ConcurrencyTests {
    let store: TemporaryStore

    init() throws {
        store = try TemporaryStore()
    }

    // MARK: One storage, many threads

    /// Writer `writer`'s `index`th credential; 40 users share each of 20 spaces, so writers contend
    /// for the same spaces (and their default) as well as for the file.
    private static func entry(writer: Int, index: Int) -> (space: ProtectionSpace, credential: Credential) {
        let user = "writer\(writer)-\(index)"
        return (Fixture.space("shared-\(index % 20).example.com"), Credential(user: user, password: password(of: user), persistence: .permanent))
    }

    private static func password(of user: String) -> String {
        "pw-\(user)-secret"
    }

    @Test func eightWritersAndTwoReadersShareOneStorageWithoutErrorsOrLostWrites() async throws {
        let storage = try store.open()
        let stream = storage.changes()
        let writers = 8, perWriter = 100
        let writing = Remaining(writers)

        // Real threads, not the cooperative pool, so that the blocking calls truly overlap.
        let readerReports = try await withThrowingTaskGroup(of: ReaderReport?.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    try await onOwnThread {
                        defer { writing.finishOne() }
                        for index in 0..<perWriter {
                            let (space, credential) = Self.entry(writer: writer, index: index)
                            try storage.set(credential, for: space)
                        }
                    }
                    return nil
                }
            }
            for reader in 0..<2 {
                group.addTask {
                    try await onOwnThread { try Self.read(storage, reader: reader, until: writing) }
                }
            }
            var reports: [ReaderReport] = []
            for try await report in group {
                if let report { reports.append(report) }
            }
            return reports
        }

        #expect(readerReports.count == 2)
        for report in readerReports {
            #expect(report.reads > 0)
            #expect(report.problems.isEmpty, "\(report.problems.prefix(5))")
        }

        var expected: [ProtectionSpace: [String: Credential]] = [:]
        for writer in 0..<writers {
            for index in 0..<perWriter {
                let (space, credential) = Self.entry(writer: writer, index: index)
                expected[space, default: [:]][credential.user] = credential
            }
        }
        #expect(expected.values.map(\.count).reduce(0, +) == 800)
        #expect(try storage.allCredentials() == expected)
        let reopened = try store.open()
        #expect(try reopened.allCredentials() == expected)
        for space in expected.keys {
            // Exactly one default per space, the same one seen from both instances.
            let chosen = try #require(try storage.defaultCredential(for: space))
            #expect(expected[space]?[chosen.user] == chosen)
            #expect(try reopened.defaultCredential(for: space) == chosen)
        }

        // Every change announced exactly once: 800 adds and one default per space.
        let changes = await collectArrived(stream, count: 820, timeout: .seconds(10))
        #expect(changes.count == 820)
        #expect(Set(changes.filter { $0.kind == .added }.map(\.user)).count == 800)
        #expect(changes.filter { $0.kind == .added }.count == 800)
        #expect(changes.filter { $0.kind == .defaultChanged }.count == 20)
        #expect(Set(changes.filter { $0.kind == .defaultChanged }.map(\.space)) == Set(expected.keys))
        #expect(changes.allSatisfy { $0.origin == .thisProcess && $0.persistence == .permanent })
    }

    struct ReaderReport: Sendable {
        var reads = 0
        var problems: [String] = []
    }

    /// Reads the shared spaces until every writer is done, noting any read that is not consistent.
    private static func read(_ storage: CredentialStorage, reader: Int, until writing: Remaining) throws -> ReaderReport {
        var report = ReaderReport()
        var index = reader
        while writing.count > 0 {
            let space = Fixture.space("shared-\(index % 20).example.com")
            index += 1
            let credentials = try storage.credentials(for: space)
            for (user, credential) in credentials where credential.user != user || credential.password != password(of: user) {
                report.problems.append("credentials(for:) gave \(user) → \(credential.user) with a wrong password")
            }
            let chosen = try storage.defaultCredential(for: space)
            if let chosen, chosen.password != password(of: chosen.user) {
                report.problems.append("defaultCredential(for:) gave \(chosen.user) with a wrong password")
            }
            // Writers only add, and the first add of a space makes a default: once a space has
            // credentials, it has a default.
            if !credentials.isEmpty, chosen == nil {
                report.problems.append("\(space.host) had credentials but no default")
            }
            report.reads += 1
        }
        return report
    }

    // MARK: Several processes, one file

    @Test func twoHelperProcessesAndThisProcessWriteOneStoreFileAtOnce() async throws {
        let storage = try store.open()
        let count = 200
        let alpha = try HelperProcess(["fill", store.databaseURL.path, store.keyFileURL.path, "alpha", "\(count)"])
        let beta = try HelperProcess(["fill", store.databaseURL.path, store.keyFileURL.path, "beta", "\(count)"])

        let localError: String? = try await onOwnThread {
            do {
                for index in 0..<count {
                    try storage.set(Credential(user: "user", password: "pw-local-\(index)", persistence: .permanent),
                                    for: Fixture.space("local-\(index).example.com"))
                }
                return nil
            } catch {
                return "\(error)"
            }
        }
        let (alphaResult, betaResult) = try await onOwnThread { (alpha.wait(), beta.wait()) }
        #expect(localError == nil, "this process's writes failed: \(localError ?? "")")
        #expect(alphaResult.status == 0, "helper alpha failed: \(alphaResult.stderr)")
        #expect(betaResult.status == 0, "helper beta failed: \(betaResult.stderr)")
        #expect(alphaResult.stderr.isEmpty && betaResult.stderr.isEmpty)

        var expected: [ProtectionSpace: [String: Credential]] = [:]
        for prefix in ["alpha", "beta", "local"] {
            for index in 0..<count {
                expected[Fixture.space("\(prefix)-\(index).example.com")] =
                    ["user": Credential(user: "user", password: "pw-\(prefix)-\(index)", persistence: .permanent)]
            }
        }
        #expect(expected.count == 600)
        #expect(try storage.allCredentials() == expected)
        let reopened = try store.open()
        #expect(try reopened.allCredentials() == expected)
        #expect(try reopened.credentials(for: Fixture.space("beta-199.example.com")) == expected[Fixture.space("beta-199.example.com")])
        #expect(try storage.repository.integrityProblems().isEmpty)
    }
}

// MARK: Support

/// How many workers are still running.
private final class Remaining: Sendable {
    private let remaining: Mutex<Int>

    init(_ count: Int) {
        remaining = Mutex(count)
    }

    func finishOne() {
        remaining.withLock { $0 -= 1 }
    }

    var count: Int {
        remaining.withLock { $0 }
    }
}

/// A helper process started now, to run beside others.
private struct HelperProcess {
    private let process: ChildProcess

    init(_ arguments: [String]) throws {
        process = try ChildProcess(helperExecutable(), arguments)
    }

    /// Waits for the process to exit; its status and what it wrote to stderr.
    func wait() -> (status: Int32, stderr: String) {
        let result = process.wait()
        return (result.status, result.stderr)
    }
}
