package import CredentialStoreCore
package import CredentialStoreCrypto

/// A credential row as the database holds it: blind indexes, tier and timestamps in the clear;
/// the space, and the user with the password, sealed, each bound to all the clear columns.
package struct SealedCredential: Hashable, Sendable {
    package var spaceIndex: BlindIndex
    package var userIndex: BlindIndex
    package var originIndex: BlindIndex
    package var persistence: Persistence
    package var created: Int64
    package var modified: Int64
    package var sealedSpace: [UInt8]
    /// User and password together, so a lookup opens one ciphertext.
    package var sealedCredential: [UInt8]
    /// The blind indexes of the credential's label and attributes, which a write keeps in
    /// `credential_tags` beside the row (``CredentialRepositoryWriting/upsert(_:)``), so that a
    /// search finds the row without opening every other. Set when the row is sealed; a row read
    /// back carries none (they are not columns of it).
    package var tagIndexes: [BlindIndex] = []

    package init(spaceIndex: BlindIndex, userIndex: BlindIndex, originIndex: BlindIndex, persistence: Persistence, created: Int64, modified: Int64, sealedSpace: [UInt8], sealedCredential: [UInt8]) {
        self.spaceIndex = spaceIndex
        self.userIndex = userIndex
        self.originIndex = originIndex
        self.persistence = persistence
        self.created = created
        self.modified = modified
        self.sealedSpace = sealedSpace
        self.sealedCredential = sealedCredential
    }
}
