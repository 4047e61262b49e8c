import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
public import Foundation
public import Logging

extension CredentialStorage {
    /// The default store's database: `$XDG_DATA_HOME/credstore/credentials.db`, or
    /// `~/.local/share/credstore/credentials.db` when `XDG_DATA_HOME` is unset or relative.
    public static func defaultDatabaseURL(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let base: URL
        if let xdg = environment["XDG_DATA_HOME"], xdg.isAbsolutePath {
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

    /// What ``StoreFile/forgetRecordedStore(at:rollbackAnchor:)`` does.
    static func forgetRecordedStore(at databaseURL: URL, rollbackAnchor: RollbackAnchor = .standard) throws {
        try StoreRecord(rollbackAnchor, databaseURL: databaseURL)?.forget()
    }

    /// Opens the user's default store, creating it and its key file on first use.
    public static func openDefault(logger: Logger = Logger(label: "credstore")) throws -> CredentialStorage {
        let databaseURL = defaultDatabaseURL()
        return try CredentialStorage(at: databaseURL, key: .keyFile(defaultKeyFileURL(forDatabase: databaseURL)), logger: logger)
    }
}

extension SealedSpace {
    /// Whether the space's default choice names a user that has no credential in it. Every write
    /// clears the choice with the credential it names, so this is the trace of a row deleted
    /// outside credstore (the table seal would notice it too, but a one-lookup process does not
    /// check the whole seal).
    var defaultIsDangling: Bool {
        guard let choice = defaultChoice else { return false }
        return !credentials.contains { $0.userIndex == choice.userIndex }
    }
}

extension CredentialStorage {
    /// What a default choice that names no credential is.
    static let danglingDefault = CredentialStorageError(.tamperDetected,
        "a default choice names a credential that is not in the store: a credential was deleted outside credstore; verify the store and restore it from a backup")
}
