import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence

/// How a merge applies the revocation statements a bundle carries (docs/sync-format.md, "Revocation").
extension Mutation {
    /// Applies each statement whose revoker this store trusts, oldest first (by the revokers'
    /// clocks; ties by key): the revoked device's row becomes a revoked one (its bundles refused,
    /// nothing sealed to it, the statement relayed on in this store's bundles). Trust is followed
    /// statement by statement, so a device revoked by an earlier statement cannot revoke anyone
    /// later, whatever order the statements arrive in. A statement is passed over when its
    /// revoker is not trusted here, when this store trusted the device again over a revocation at
    /// least as late (or, another revoker's, dated more than twice the allowed clock skew before
    /// that trust), and when it is dated more than the allowed clock skew ahead of this
    /// machine's clock. This store's own statements apply too (a store put back from a backup
    /// learns its own revocations again); one naming this store is reported but changes nothing.
    ///
    /// - Returns: the revocations that took effect here, this device's own included.
    /// - Throws: `invalidBundle` when a statement's signature does not verify.
    func applyRevocations(_ statements: [RevocationStatement], device: DeviceIdentity) throws -> [DeviceRevocation] {
        var applied: [DeviceRevocation] = []
        let latest = clock.now() + SyncWindows.maximumClockSkew
        let ordered = statements.sorted { a, b in
            if a.revokedAt != b.revokedAt { return a.revokedAt < b.revokedAt }
            if a.revoker != b.revoker { return a.revoker.bytes.lexicographicallyPrecedes(b.revoker.bytes) }
            return a.revoked.bytes.lexicographicallyPrecedes(b.revoked.bytes)
        }
        for statement in ordered {
            guard statement.verifies else {
                throw BundleFormat.invalid("a revocation's signature does not verify")
            }
            guard statement.revokedAt <= latest else { continue }
            let revokerTrusted = try statement.revoker == device.publicKey || record(of: statement.revoker)?.isTrusted == true
            guard revokerTrusted else { continue }
            if statement.revoked == device.publicKey {
                if statement.revoker != device.publicKey { applied.append(DeviceRevocation(statement)) }
                continue
            }
            let existing = try record(of: statement.revoked)
            if let existing, !existing.isTrusted { continue }
            // Trusted here again over a revocation at least as late (the revokers' clocks, not this
            // machine's against theirs): the local choice stands.
            if let overridden = existing?.overridesRevocationsUpTo, overridden >= statement.revokedAt { continue }
            // Trusted here again over a revocation: another revoker's statement dated before that
            // trust by more than two clocks can be apart (each within the allowed skew) was made
            // before the user chose the device again, and that choice stands over it too. Nearer
            // the trust, the clocks cannot order the two, and the revocation wins.
            if let existing, existing.overridesRevocationsUpTo != nil, let trusted = existing.trusted,
               statement.revokedAt < trusted - 2 * SyncWindows.maximumClockSkew { continue }
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
