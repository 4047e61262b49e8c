import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import Foundation
import Logging

extension CredentialStorage {
    /// What ``StoreFile/forgetRecordedStore(at:rollbackAnchor:)`` does.
    static func forgetRecordedStore(at databaseURL: URL, rollbackAnchor: RollbackAnchor = .standard) throws {
        try StoreRecord(rollbackAnchor, databaseURL: databaseURL)?.forget()
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
