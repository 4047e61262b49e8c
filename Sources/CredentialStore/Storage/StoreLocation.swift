public import Foundation

/// Where a store's files are: its database, and the key file that unlocks a key-file store.
public struct StoreLocation: Hashable, Sendable {
    /// The SQLite database file.
    public let databaseURL: URL
    /// The key file of a key-file store: what ``CredentialStorage/init(at:key:options:)`` opens
    /// the store with when no key is given.
    public let keyFileURL: URL

    /// A store at `databaseURL`, its key file at `keyFileURL`, or `store.key` beside the database.
    public init(databaseURL: URL, keyFileURL: URL? = nil) {
        self.databaseURL = databaseURL
        // Saying it is a file spares Foundation a stat(2) to find out.
        self.keyFileURL = keyFileURL
            ?? databaseURL.deletingLastPathComponent().appendingPathComponent("store.key", isDirectory: false)
    }

    /// The user's default store: `$XDG_DATA_HOME/credstore/credentials.db`, or
    /// `~/.local/share/credstore/credentials.db` when `XDG_DATA_HOME` is unset or relative, with
    /// `store.key` beside it.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> StoreLocation {
        let base: URL
        if let xdg = environment["XDG_DATA_HOME"], xdg.isAbsolutePath {
            base = URL(fileURLWithPath: xdg, isDirectory: true)
        } else {
            let home = environment["HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
                ?? FileManager.default.homeDirectoryForCurrentUser
            base = home.appendingPathComponent(".local/share", isDirectory: true)
        }
        return StoreLocation(databaseURL: base.appendingPathComponent("credstore/credentials.db", isDirectory: false))
    }
}
