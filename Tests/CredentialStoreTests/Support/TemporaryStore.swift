import Foundation
import GRDB
import Synchronization
import Testing
@testable import CredentialStore

/// A store in a fresh temporary folder, removed when the value goes away.
final class TemporaryStore {
    let directory: URL
    let databaseURL: URL
    let keyFileURL: URL

    init() throws {
        directory = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("credstore-tests-\(UUID().uuidString)", isDirectory: true)
            .appendingPathComponent("store", isDirectory: true)
        databaseURL = directory.appendingPathComponent("credentials.db")
        keyFileURL = directory.appendingPathComponent("store.key")
    }

    /// Where this store's rollback anchor is kept: beside the store's folder, not in it.
    var anchorDirectory: URL { directory.deletingLastPathComponent().appendingPathComponent("anchors", isDirectory: true) }

    /// Opens (creating on first use) the store with its key file, reading the time from `clock`.
    func open(integrityCheck: CredentialStorage.IntegrityCheck = .onOpen, clock: any StoreClock = SystemClock()) throws -> CredentialStorage {
        try CredentialStorage(at: databaseURL, key: .keyFile(keyFileURL), integrityCheck: integrityCheck,
                              rollbackAnchor: .directory(anchorDirectory), clock: clock)
    }

    /// Waits until no connection holds the store: SQLite removes the WAL when the last one closes.
    /// A store closes when its last reference goes, which a notification being delivered on
    /// another thread can hold for a moment.
    func waitUntilClosed() {
        let wal = databaseURL.path + "-wal"
        for _ in 0..<200 where FileManager.default.fileExists(atPath: wal) {
            usleep(10_000)
        }
    }

    /// A raw connection to the store file, for tests that play an attacker editing it.
    func rawDatabase() throws -> DatabaseQueue {
        waitUntilClosed()
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        return try DatabaseQueue(path: databaseURL.path, configuration: configuration)
    }

    /// Every file in the store's folder, with its bytes.
    func files() throws -> [URL: Data] {
        var result: [URL: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let url = directory.appendingPathComponent(name)
            result[url] = try Data(contentsOf: url)
        }
        return result
    }

    deinit {
        try? FileManager.default.removeItem(at: directory.deletingLastPathComponent())
    }
}

/// Shorthands for the spaces and credentials tests use.
enum Fixture {
    static func space(_ host: String = "api.example.com", realm: String? = nil, method: AuthenticationMethod? = nil) -> ProtectionSpace {
        ProtectionSpace(host: host, port: 443, protocol: "https", realm: realm, authenticationMethod: method)
    }

    static func credential(_ user: String, _ password: String = "pw", _ persistence: Persistence = .permanent) -> Credential {
        Credential(user: user, password: password, persistence: persistence)
    }
}

/// The helper executable built beside the test bundle (Tests/Helper).
func helperExecutable() -> URL {
    let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return testBinary.deletingLastPathComponent().appendingPathComponent("credstore-test-helper")
}

/// Runs the helper with `arguments`, feeding `input` on stdin; returns its exit status and stderr.
@discardableResult
func runHelper(_ arguments: [String], input: String = "") throws -> (status: Int32, stderr: String) {
    let process = Process()
    process.executableURL = helperExecutable()
    process.arguments = arguments
    let stdin = Pipe()
    let stderr = Pipe()
    process.standardInput = stdin
    process.standardError = stderr
    try process.run()
    stdin.fileHandleForWriting.write(Data(input.utf8))
    try stdin.fileHandleForWriting.close()
    let errorText = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, errorText)
}

/// Collects the changes a stream delivers until `count` have arrived or `timeout` passes.
func collect(_ stream: AsyncStream<CredentialChange>, count: Int, timeout: Duration) async -> [CredentialChange] {
    await withTaskGroup(of: [CredentialChange]?.self) { group in
        group.addTask {
            var received: [CredentialChange] = []
            for await change in stream {
                received.append(change)
                if received.count >= count { break }
            }
            return received
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        var best: [CredentialChange] = []
        for await result in group {
            if let result {
                best = result
                group.cancelAll()
                break
            }
            group.cancelAll()
            break
        }
        return best
    }
}

/// Expects `body` to throw a ``CredentialStorageError`` with `code`, and a message that names no secret.
func expectError<T>(
    _ code: CredentialStorageError.Code, secrets: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T
) {
    let error = #expect(throws: CredentialStorageError.self, sourceLocation: sourceLocation) { _ = try body() }
    #expect(error?.code == code, sourceLocation: sourceLocation)
    for secret in secrets {
        #expect(error?.message.contains(secret) == false, "the message leaks a secret", sourceLocation: sourceLocation)
    }
}

/// A clock a test moves by hand: it starts at the system's time and stands still until advanced,
/// so that "later", "181 days on" or "the same millisecond" need no sleeping and no edited rows.
final class TestClock: StoreClock {
    private let reading: Mutex<Int64>

    init(startingAt start: Int64 = SystemClock().now()) {
        reading = Mutex(start)
    }

    func now() -> Int64 {
        reading.withLock { $0 }
    }

    /// Moves the clock on by `milliseconds` (back, when negative).
    func advance(by milliseconds: Int64) {
        reading.withLock { $0 += milliseconds }
    }

    static let day: Int64 = 24 * 3600 * 1000
}
