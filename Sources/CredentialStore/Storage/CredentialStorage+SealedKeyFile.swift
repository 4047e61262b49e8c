public import Foundation
import CredentialStoreCore
import CredentialStoreCrypto

extension CredentialStorage {
    /// Creates a key file at `url` that only this machine can open: a fresh random key sealed by
    /// `seal`, never written in the clear. Open the store with ``/CredentialStoreCore/StoreKey/keyFile(_:)``
    /// as usual; reading the key file unseals it.
    ///
    /// - Throws: ``/CredentialStoreCore/CredentialStorageError/Code/unavailable`` when the sealing
    ///   tool is missing or not allowed here (before systemd 256, only root can use the host key),
    ///   with what to do instead; ``/CredentialStoreCore/CredentialStorageError/Code/io`` when a
    ///   key file is already at `url`.
    public static func createSealedKeyFile(at url: URL, sealedWith seal: KeyFileSeal = .systemdCreds) throws {
        guard try !StoreFiles.checkExisting(url.path) else {
            throw CredentialStorageError(.io, "a key file already exists at \(url.path); seal it with sealKeyFile(at:) instead")
        }
        guard try StoreFiles.createSealedKeyFile(url, sealer: seal.sealer) != nil else {
            throw CredentialStorageError(.io, "a key file appeared at \(url.path) meanwhile")
        }
    }

    /// Seals the plain key file at `url` in place, so that it opens its store on this machine only;
    /// returns false when it is sealed already.
    ///
    /// The file is replaced through a rename. The plain key it held may survive in the disk's free
    /// blocks, a snapshot or a backup: a store that must never have had a plain key is created with
    /// ``createSealedKeyFile(at:sealedWith:)``.
    @discardableResult
    public static func sealKeyFile(at url: URL, with seal: KeyFileSeal = .systemdCreds) throws -> Bool {
        try StoreFiles.sealKeyFile(url, sealer: seal.sealer)
    }

    /// What seals the key file at `url`: nil for a plain key file, or one that cannot be read.
    public static func keyFileSeal(at url: URL) -> KeyFileSeal? {
        StoreFiles.isSealedKeyFile(url.path) == true ? .systemdCreds : nil
    }
}
