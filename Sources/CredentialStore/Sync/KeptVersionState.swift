import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

/// A kept version as its sealed row holds it: the credential as it was, the clock reading it was
/// written under, the reading of the version that replaced it, and when it was replaced.
struct KeptVersionState: Sendable {
    var space: ProtectionSpace
    var credential: Credential
    var stamp: HybridTimestamp
    var winner: HybridTimestamp
    /// When it was replaced, in milliseconds since 1970 (this store's clock).
    var kept: Int64
}

/// Sealing of kept versions, bound like credential rows to their clear columns.
extension StoreKeyring {
    /// The associated-data field of a kept version (after the credentials' and the sync tables').
    private static let keptVersionField: UInt8 = 11

    /// Leads a kept version of a credential that was outside sync (a permanent one the fleet's value
    /// replaced), followed by a byte for its tier: where a synchronizable version's space length
    /// starts, which is never negative, so versions kept before are read as they were.
    private static let tierMarker: Int64 = -1
    private static let permanentTier: UInt8 = 1

    private func keptVersionAD(spaceIndex: BlindIndex, userIndex: BlindIndex, kept: Int64) -> [UInt8] {
        var writer = ByteWriter(capacity: 48)
        writer.append(Self.keptVersionField)
        writer.append(raw: spaceIndex.bytes)
        writer.append(raw: userIndex.bytes)
        writer.append(kept)
        return writer.bytes
    }

    func encrypt(_ state: KeptVersionState, spaceIndex: BlindIndex, userIndex: BlindIndex) -> SealedKeptVersion {
        var plain = ByteWriter(capacity: 160)
        defer { plain.wipe() }
        if state.credential.persistence == .permanent {
            plain.append(Self.tierMarker)
            plain.append(Self.permanentTier)
        }
        plain.append(raw: state.space.canonicalEncoding.lengthPrefixed)
        state.stamp.write(to: &plain)
        state.winner.write(to: &plain)
        plain.append(state.credential.user)
        plain.append(state.credential.password)
        if state.credential.hasDetails { Self.appendDetails(of: state.credential, to: &plain) }
        return SealedKeptVersion(
            spaceIndex: spaceIndex, userIndex: userIndex, kept: state.kept,
            sealedVersion: encrypt(plain.bytes, ad: keptVersionAD(spaceIndex: spaceIndex, userIndex: userIndex, kept: state.kept)))
    }

    /// A kept version opened; `tamperDetected` when it fails authentication or names another row.
    func decrypt(_ row: SealedKeptVersion) throws -> KeptVersionState {
        var opened: KeptVersionState?
        decrypt(row.sealedVersion, ad: keptVersionAD(spaceIndex: row.spaceIndex, userIndex: row.userIndex, kept: row.kept), visiting: { plain in
            var reader = ByteReader(plain)
            defer { reader.wipe() }
            var persistence = Persistence.synchronizable
            var probe = reader
            if (try? probe.readInt64()) == Self.tierMarker {
                guard (try? probe.readByte()) == Self.permanentTier else { return }
                persistence = .permanent
                reader = probe
            }
            guard let space = try? reader.readLengthPrefixedSpace(),
                  let stamp = try? HybridTimestamp.read(from: &reader), let winner = try? HybridTimestamp.read(from: &reader),
                  let user = try? reader.readString(), let password = try? reader.readString()
            else { return }
            var credential = Credential(user: user, password: password, persistence: persistence)
            guard reader.isAtEnd || (try? Self.readDetails(into: &credential, from: &reader)) != nil, credential.hasExpiryInRange else { return }
            opened = KeptVersionState(space: space, credential: credential, stamp: stamp, winner: winner, kept: row.kept)
        })
        guard let opened, spaceIndex(opened.space) == row.spaceIndex,
              userIndex(spaceIndex: row.spaceIndex, user: opened.credential.user) == row.userIndex
        else { throw Self.tampered }
        return opened
    }
}
