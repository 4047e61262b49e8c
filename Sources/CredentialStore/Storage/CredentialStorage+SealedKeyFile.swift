import Foundation
import CredentialStoreCore
import CredentialStoreCrypto

extension CredentialStorage {
    /// What ``StoreFile/createSealedKeyFile(at:sealedWith:)`` does.
    static func createSealedKeyFile(at url: URL, sealedWith seal: KeyFileSeal = .systemdCreds) throws {
        guard try !StoreFiles.checkExisting(url.path) else {
            throw CredentialStorageError(.io, "a key file already exists at \(url.path); seal it with StoreFile.sealKeyFile(at:) instead")
        }
        guard try StoreFiles.createSealedKeyFile(url, sealer: seal.sealer) != nil else {
            throw CredentialStorageError(.io, "a key file appeared at \(url.path) meanwhile")
        }
    }

    /// What ``StoreFile/sealKeyFile(at:with:)`` does.
    @discardableResult
    static func sealKeyFile(at url: URL, with seal: KeyFileSeal = .systemdCreds) throws -> Bool {
        try StoreFiles.sealKeyFile(url, sealer: seal.sealer)
    }

    /// What ``StoreFile/keyFileSeal(at:)`` does.
    static func keyFileSeal(at url: URL) -> KeyFileSeal? {
        StoreFiles.isSealedKeyFile(url.path) == true ? .systemdCreds : nil
    }
}
