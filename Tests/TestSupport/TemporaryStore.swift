package import CredentialStore
public import Foundation
public import GRDB

/// A store in a fresh temporary folder, removed when the value goes away, so tests never share one.
public final class TemporaryStore: @unchecked Sendable {
    /// The store's folder (`…/credstore-tests-UUID/store`).
    public let directory: URL
    /// The store file, `directory/credentials.db`.
    public let databaseURL: URL
    /// The key file beside it, `directory/store.key`.
    public let keyFileURL: URL

    public init() throws {
        directory = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("credstore-tests-\(UUID().uuidString)", isDirectory: true)
            .appendingPathComponent("store", isDirectory: true)
        databaseURL = directory.appendingPathComponent("credentials.db")
        keyFileURL = directory.appendingPathComponent("store.key")
    }

    deinit {
        try? FileManager.default.removeItem(at: directory.deletingLastPathComponent())
    }

    /// Where this store's rollback anchor is kept: beside the store's folder, not in it (and not
    /// under the real home).
    public var anchorDirectory: URL { directory.deletingLastPathComponent().appendingPathComponent("anchors", isDirectory: true) }

    /// A file beside the store's folder, removed with it.
    public func file(_ name: String) -> URL {
        directory.deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Opens (creating on first use) the store with its key file, reading the time from `clock`.
    package func open(integrityCheck: CredentialStorage.IntegrityCheck = .onOpen, clock: any StoreClock = SystemClock()) throws -> CredentialStorage {
        try CredentialStorage(at: databaseURL, key: .keyFile(keyFileURL), integrityCheck: integrityCheck,
                              rollbackAnchor: .directory(anchorDirectory), clock: clock)
    }

    /// Waits until no connection holds the store: SQLite removes the WAL when the last one closes.
    /// A store closes when its last reference goes, which a notification being delivered on
    /// another thread can hold for a moment.
    public func waitUntilClosed() {
        let wal = databaseURL.path + "-wal"
        for _ in 0..<200 where FileManager.default.fileExists(atPath: wal) {
            usleep(10_000)
        }
    }

    /// A raw connection to the store file, for tests that play an attacker editing it.
    public func rawDatabase() throws -> DatabaseQueue {
        waitUntilClosed()
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        return try DatabaseQueue(path: databaseURL.path, configuration: configuration)
    }

    /// Every file in the store's folder, with its bytes.
    public func files() throws -> [URL: Data] {
        var result: [URL: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let url = directory.appendingPathComponent(name)
            result[url] = try Data(contentsOf: url)
        }
        return result
    }

    /// A fresh store holding a copy of this one's files (0600 files in a 0700 folder), which must
    /// be closed. The copy has this store's id, and a rollback anchor folder of its own.
    public func copy() throws -> TemporaryStore {
        waitUntilClosed()
        let copy = try TemporaryStore()
        try FileManager.default.createDirectory(at: copy.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for (source, target) in [(databaseURL, copy.databaseURL), (keyFileURL, copy.keyFileURL)] {
            try FileManager.default.copyItem(at: source, to: target)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: target.path)
        }
        return copy
    }
}
