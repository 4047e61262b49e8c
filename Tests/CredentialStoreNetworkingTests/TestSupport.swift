import CredentialStore
import Foundation

/// A store in a fresh temporary folder, removed when the value goes away, so tests never share one.
final class TemporaryStore {
    let directory: URL

    init() {
        directory = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("credstore-networking-tests-\(UUID().uuidString)", isDirectory: true)
    }

    /// Opens (creating on first use) the store with its key file.
    func open() throws -> CredentialStorage {
        let store = directory.appendingPathComponent("store", isDirectory: true)
        return try CredentialStorage(at: store.appendingPathComponent("credentials.db"),
                                     key: .keyFile(store.appendingPathComponent("store.key")))
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }
}
