package import CredentialStoreCrypto

/// The last-writer-wins default choice of one space, sealed.
package struct SealedSyncDefault: Hashable, Sendable {
    package var spaceIndex: BlindIndex
    package var sealedState: [UInt8]

    package init(spaceIndex: BlindIndex, sealedState: [UInt8]) {
        self.spaceIndex = spaceIndex
        self.sealedState = sealedState
    }
}
