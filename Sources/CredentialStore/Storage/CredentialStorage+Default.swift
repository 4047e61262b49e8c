public import Foundation
public import Logging

extension CredentialStorage {
    /// The default store's database: `$XDG_DATA_HOME/credstore/credentials.db`, or
    /// `~/.local/share/credstore/credentials.db` when `XDG_DATA_HOME` is unset or relative.
    public static func defaultDatabaseURL(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let base: URL
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            base = URL(fileURLWithPath: xdg, isDirectory: true)
        } else {
            let home = environment["HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
                ?? FileManager.default.homeDirectoryForCurrentUser
            base = home.appendingPathComponent(".local/share", isDirectory: true)
        }
        return base.appendingPathComponent("credstore/credentials.db", isDirectory: false)
    }

    /// The key file of a store: `store.key` beside its database.
    public static func defaultKeyFileURL(forDatabase databaseURL: URL) -> URL {
        // Saying it is a file spares Foundation a stat(2) to find out.
        databaseURL.deletingLastPathComponent().appendingPathComponent("store.key", isDirectory: false)
    }

    /// Opens the user's default store, creating it and its key file on first use.
    public static func openDefault(logger: Logger = Logger(label: "credstore")) throws -> CredentialStorage {
        let databaseURL = defaultDatabaseURL()
        return try CredentialStorage(at: databaseURL, key: .keyFile(defaultKeyFileURL(forDatabase: databaseURL)), logger: logger)
    }
}
