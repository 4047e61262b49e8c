package import CredentialStoreCrypto

/// The sync state of one synchronizable item (live or tombstone), sealed; the flag and wall time
/// are clear for tombstone expiry and bound into the seal.
package struct SealedSyncItem: Hashable, Sendable {
    package var spaceIndex: BlindIndex
    package var userIndex: BlindIndex
    package var deleted: Bool
    package var wall: Int64
    package var sealedState: [UInt8]

    package init(spaceIndex: BlindIndex, userIndex: BlindIndex, deleted: Bool, wall: Int64, sealedState: [UInt8]) {
        self.spaceIndex = spaceIndex
        self.userIndex = userIndex
        self.deleted = deleted
        self.wall = wall
        self.sealedState = sealedState
    }
}
