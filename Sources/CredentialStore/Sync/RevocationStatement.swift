import CredentialStoreCore
import CredentialStoreCrypto

/// "Device `revoked` is no longer trusted", signed by the device that said so.
///
/// An untrust is recorded as one of these and travels in every bundle of every store that
/// applied it, so a revocation reaches the whole fleet even when its author never syncs again:
/// each store that trusts the revoker applies it on its next merge (docs/sync-format.md,
/// "Revocation"). The signature is the revoker's own, not the relaying bundle's, so a store
/// relaying a statement cannot forge or alter one.
struct RevocationStatement: Hashable, Sendable {
    var revoked: DeviceKey
    var revoker: DeviceKey
    /// When the revoker untrusted the device, on its clock (milliseconds since 1970).
    var revokedAt: Int64
    var signature: [UInt8]

    /// The bytes one statement takes in a bundle and in a trusted device's sealed row.
    static let encodedBytes = 2 * Sodium.signPublicKeyBytes + 8 + Sodium.signatureBytes

    /// Keeps a statement signed for one purpose from being read as any other signed bytes.
    private static let domain = Array("CSREVOKE1".utf8)

    /// Signs a statement that `identity`'s device revokes `revoked` at `revokedAt`.
    init(revoking revoked: DeviceKey, by identity: DeviceIdentity, at revokedAt: Int64) {
        self.revoked = revoked
        self.revoker = identity.publicKey
        self.revokedAt = revokedAt
        self.signature = Sodium.sign(Self.message(revoked: revoked, revoker: identity.publicKey, revokedAt: revokedAt), secretKey: identity.secretKey)
    }

    /// Whether the revoker's signature covers exactly these fields.
    var verifies: Bool {
        Sodium.verify(signature: signature, message: Self.message(revoked: revoked, revoker: revoker, revokedAt: revokedAt), publicKey: revoker.bytes)
    }

    private static func message(revoked: DeviceKey, revoker: DeviceKey, revokedAt: Int64) -> [UInt8] {
        var writer = ByteWriter(capacity: domain.count + encodedBytes)
        writer.append(raw: domain)
        writer.append(raw: revoked.bytes)
        writer.append(raw: revoker.bytes)
        writer.append(revokedAt)
        return writer.bytes
    }

    func write(to writer: inout ByteWriter) {
        writer.append(raw: revoked.bytes)
        writer.append(raw: revoker.bytes)
        writer.append(revokedAt)
        writer.append(raw: signature)
    }

    /// Reads a statement's fields (its signature is checked by whoever applies it).
    static func read(from reader: inout ByteReader) throws -> RevocationStatement {
        let revoked = DeviceKey(bytes: Array(try reader.readRaw(count: Sodium.signPublicKeyBytes)))
        let revoker = DeviceKey(bytes: Array(try reader.readRaw(count: Sodium.signPublicKeyBytes)))
        let revokedAt = try reader.readInt64()
        let signature = Array(try reader.readRaw(count: Sodium.signatureBytes))
        return RevocationStatement(revoked: revoked, revoker: revoker, revokedAt: revokedAt, signature: signature)
    }

    private init(revoked: DeviceKey, revoker: DeviceKey, revokedAt: Int64, signature: [UInt8]) {
        self.revoked = revoked
        self.revoker = revoker
        self.revokedAt = revokedAt
        self.signature = signature
    }
}
