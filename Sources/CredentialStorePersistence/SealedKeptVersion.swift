package import CredentialStoreCrypto

/// A version of a synchronizable credential that lost a concurrent edit, sealed: its blind
/// indexes and the time it was replaced are clear (for expiry) and bound into the seal.
package struct SealedKeptVersion: Hashable, Sendable {
    package var spaceIndex: BlindIndex
    package var userIndex: BlindIndex
    /// When it was replaced, in milliseconds since 1970; unique per credential.
    package var kept: Int64
    /// Space, user, password, details and the clock readings of the version and of its winner.
    package var sealedVersion: [UInt8]

    package init(spaceIndex: BlindIndex, userIndex: BlindIndex, kept: Int64, sealedVersion: [UInt8]) {
        self.spaceIndex = spaceIndex
        self.userIndex = userIndex
        self.kept = kept
        self.sealedVersion = sealedVersion
    }
}
