package import CredentialStoreCrypto

/// The default choice of one space: the chosen user's blind index and sealed name.
package struct SealedDefault: Hashable, Sendable {
    package var spaceIndex: BlindIndex
    package var userIndex: BlindIndex
    package var sealedUser: [UInt8]

    package init(spaceIndex: BlindIndex, userIndex: BlindIndex, sealedUser: [UInt8]) {
        self.spaceIndex = spaceIndex
        self.userIndex = userIndex
        self.sealedUser = sealedUser
    }
}
