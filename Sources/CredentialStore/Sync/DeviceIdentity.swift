import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import Foundation

/// This store's identity among the machines it syncs with: a random device id, which breaks
/// clock ties, and an Ed25519 key pair, which signs its bundles and (converted to X25519) opens
/// bundles sealed to it.
///
/// It also records, sealed with the secret key, the ``DevicePlace`` it was made for (the machine
/// and the user's state folder): a copy of the store opened anywhere else takes a new identity,
/// so that two live stores never sign, and write the folder's bundle, as one device.
struct DeviceIdentity: Sendable {
    static let idBytes = 16
    /// An Ed25519 secret key's length; the sealed secret holds the place after it.
    static let secretKeyBytes = 64

    var deviceID: [UInt8]
    var publicKey: DeviceKey
    var secretKey: SecureBytes
    /// Where the identity was made; nil for one made before places were recorded, or without a
    /// state folder.
    var place: DevicePlace?

    /// This store's device as its sealed row holds it; a row whose key is not a key's length was
    /// altered (its secret would not open either).
    init(opening sealed: SealedDevice, keys: StoreKeyring) throws {
        guard let publicKey = DeviceKey(checking: sealed.publicKey) else { throw StoreKeyring.tampered }
        let plain = try keys.decryptDeviceSecret(sealed)
        // The secret key, then optionally the place: a version of credstore that knows nothing of
        // places reads the first 64 bytes as the key, as libsodium does.
        let (secretKey, place) = try plain.withUnsafeBytes { raw -> (SecureBytes, DevicePlace?) in
            switch raw.count {
            case Self.secretKeyBytes:
                return (try SecureBytes(copying: raw), nil)
            case Self.secretKeyBytes + DevicePlace.bytes:
                return (try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: raw[..<Self.secretKeyBytes])),
                        DevicePlace(digest: Array(raw[Self.secretKeyBytes...])))
            default:
                throw StoreKeyring.tampered
            }
        }
        self.init(deviceID: sealed.deviceID, publicKey: publicKey, secretKey: secretKey, place: place)
    }

    init(deviceID: [UInt8], publicKey: DeviceKey, secretKey: SecureBytes, place: DevicePlace? = nil) {
        self.deviceID = deviceID
        self.publicKey = publicKey
        self.secretKey = secretKey
        self.place = place
    }

    /// A new identity (id and key pair) made for `place`.
    static func make(place: DevicePlace?) throws -> DeviceIdentity {
        let (publicKey, secretKey) = try Sodium.signingKeyPair()
        return DeviceIdentity(
            deviceID: Sodium.randomBytes(idBytes), publicKey: DeviceKey(bytes: publicKey), secretKey: secretKey, place: place)
    }

    /// The row that keeps this identity, its secret key and place sealed.
    func sealed(keys: StoreKeyring) throws -> SealedDevice {
        let place = place?.digest ?? []
        let plain = try secretKey.withUnsafeBytes { secret in
            try SecureBytes(count: secret.count + place.count) { buffer in
                buffer.copyMemory(from: secret)
                if !place.isEmpty {
                    place.withUnsafeBytes { (buffer.baseAddress! + secret.count).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                }
            }
        }
        return SealedDevice(
            deviceID: deviceID, publicKey: publicKey.bytes,
            sealedSecretKey: keys.encryptDeviceSecret(plain, deviceID: deviceID, publicKey: publicKey.bytes))
    }

    /// This identity's id in hex, as bundle names and `credstore device show` spell it.
    var hexID: String { deviceID.map { String(format: "%02x", $0) }.joined() }
}
