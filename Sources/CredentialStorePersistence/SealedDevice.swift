/// This store's device identity for sync; the secret signing key sealed.
package struct SealedDevice: Hashable, Sendable {
    package var deviceID: [UInt8]
    package var publicKey: [UInt8]
    package var sealedSecretKey: [UInt8]

    package init(deviceID: [UInt8], publicKey: [UInt8], sealedSecretKey: [UInt8]) {
        self.deviceID = deviceID
        self.publicKey = publicKey
        self.sealedSecretKey = sealedSecretKey
    }
}
