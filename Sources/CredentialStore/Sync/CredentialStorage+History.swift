import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import Foundation

/// The versions that lost a concurrent edit, kept for the user to see and restore
/// (docs/sync-format.md, "Concurrent edits").
///
/// Public, not only for the CLI: an application that hears ``CredentialChange/Kind/conflict``
/// from ``changes()`` needs to show the user what was replaced and offer it back.
extension CredentialStorage {
    /// What ``SyncDevice/keptVersionsPerCredential`` does.
    static let keptVersionsPerCredential = 10

    /// What ``SyncDevice/keptVersions(of:in:)`` does.
    func keptVersions(of user: String, in space: ProtectionSpace) throws -> [KeptVersion] {
        try space.validate()
        _ = try followRekey()
        let keys = keys
        let spaceIndex = keys.spaceIndex(space)
        let userIndex = keys.userIndex(spaceIndex: spaceIndex, user: user)
        let rows = try repository.snapshotRead { reader in
            let rows = try reader.keptVersions(space: spaceIndex)
            try checkLeaves([SealChecks.keptVersionsClaim(spaceIndex, rows, keys: keys)], reader: reader, keys: keys)
            return rows
        }
        let oldest = clock.now() - SyncLedger.tombstoneLifetimeMillis
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        return try rows.filter { $0.userIndex == userIndex && $0.kept >= oldest }
            .sorted { $0.kept > $1.kept }
            .map { row in
                let state = try keys.decrypt(row)
                return KeptVersion(
                    space: state.space, credential: state.credential,
                    written: Date(timeIntervalSince1970: Double(state.stamp.wall) / 1000), writtenBy: hex(state.stamp.device),
                    replaced: Date(timeIntervalSince1970: Double(state.kept) / 1000), replacedBy: hex(state.winner.device))
            }
    }

    /// What ``SyncDevice/restore(_:)`` does.
    func restore(_ version: KeptVersion) throws {
        var credential = version.credential
        guard credential.persistence == .synchronizable else {
            throw CredentialStorageError(.invalidInput, "only a kept version of a synchronizable credential can be restored")
        }
        if let current = try credentials(for: version.space)[credential.user], current.persistence != .synchronizable {
            throw CredentialStorageError(.invalidInput,
                "the credential is kept outside sync here now (\(current.persistence)); restoring the version would replace that value and send it to every machine, so nothing was restored")
        }
        credential.persistence = .synchronizable
        try credential.validate(in: version.space)
        try mutate { try $0.set(credential, in: version.space, makeDefault: false, fields: .replacingDetails) }
    }

    /// `verify`'s part: every kept version opens, and belongs to a credential there is (removing
    /// a credential removes its kept versions).
    func verifyKeptVersions(keys: StoreKeyring, credentialKeys: Set<[UInt8]>, into report: inout VerificationReport) throws {
        let rows = try repository.snapshotRead { try $0.allKeptVersions() }
        for (position, row) in rows.enumerated() {
            if (try? keys.decrypt(row)) == nil {
                report.problems.append("kept version \(position + 1) fails authentication: it was altered, or moved from another row")
                report.authenticationFailures += 1
            } else if !credentialKeys.contains(row.spaceIndex.bytes + row.userIndex.bytes) {
                report.problems.append("kept version \(position + 1) belongs to no credential")
                report.authenticationFailures += 1
            }
        }
    }
}
