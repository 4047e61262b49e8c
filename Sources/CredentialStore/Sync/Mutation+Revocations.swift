import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence

/// How a merge applies the revocation statements a bundle carries (docs/sync-format.md, "Revocation").
extension Mutation {
    /// Applies each statement whose revoker this store trusts: the revoked device's row becomes a
    /// revoked one (its bundles refused, nothing sealed to it, the statement relayed on in this
    /// store's bundles). A statement is passed over when this store trusted the device again
    /// locally after it was made, when its revoker is not trusted here (a revoked device's
    /// statements included), and when it is this store's own; one naming this store is reported
    /// but changes nothing here.
    ///
    /// - Returns: the revocations that took effect here, this device's own included.
    /// - Throws: `invalidBundle` when a statement's signature does not verify.
    func applyRevocations(_ statements: [RevocationStatement], device: DeviceIdentity) throws -> [DeviceRevocation] {
        var applied: [DeviceRevocation] = []
        // Trust as it stood before this bundle: a statement in it cannot disable another in it.
        var revokers: [DeviceKey: Bool] = [:]
        func trusts(_ key: DeviceKey) throws -> Bool {
            if let known = revokers[key] { return known }
            let trusted = try record(of: key)?.isTrusted ?? false
            revokers[key] = trusted
            return trusted
        }
        for statement in statements {
            guard statement.verifies else {
                throw BundleFormat.invalid("a revocation's signature does not verify")
            }
            guard statement.revoker != device.publicKey, try trusts(statement.revoker) else { continue }
            if statement.revoked == device.publicKey {
                applied.append(DeviceRevocation(statement))
                continue
            }
            let existing = try record(of: statement.revoked)
            if let existing, !existing.isTrusted { continue }
            // Trusted here again over a revocation at least as late (the revokers' clocks, not this
            // machine's against theirs): the local choice stands.
            if let overridden = existing?.overridesRevocationsUpTo, overridden >= statement.revokedAt { continue }
            // A device this store never trusted is recorded as revoked too, so the statement
            // travels on and a later bundle of that device's is refused with its reason.
            var record = existing ?? TrustedDeviceRecord(publicKey: statement.revoked)
            record.revocation = statement
            try transaction.addTrustedDevice(keyIndex: keys.trustedKeyIndex(statement.revoked), sealedPublicKey: keys.encryptTrustedDevice(record))
            if existing != nil { applied.append(DeviceRevocation(statement)) }
        }
        return applied
    }

    /// The row this store keeps for `key`, opened.
    private func record(of key: DeviceKey) throws -> TrustedDeviceRecord? {
        let index = keys.trustedKeyIndex(key)
        guard let sealed = try transaction.trustedDevice(keyIndex: index) else { return nil }
        guard let record = keys.decryptTrustedDevice(keyIndex: index, sealed: sealed) else { throw StoreKeyring.tampered }
        return record
    }
}
