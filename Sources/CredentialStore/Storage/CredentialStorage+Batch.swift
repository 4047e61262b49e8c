package import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence

extension CredentialStorage {
    /// Stores `items` in one transaction: every one of them or, when anything throws, none.
    ///
    /// `package`, not public: the CLI's `import --from` needs one atomic write of many
    /// credentials, and whether the library should offer that (and with which conflict rule) is
    /// a public-API decision not taken yet. Each item is compared, inside the transaction, with
    /// what its space holds for its user, so another writer cannot slip a password in between
    /// the comparison and the write.
    ///
    /// - Parameters:
    ///   - items: The credentials, each with its space; a user should appear once per space (a
    ///     later item for the same space and user compares with the earlier one's result).
    ///   - replacingDifferent: Whether a user the space holds with another password gets the
    ///     item's password (``BatchWriteOutcome/updated``) or keeps its own
    ///     (``BatchWriteOutcome/keptDifferent``). A replaced credential keeps what the item
    ///     leaves unset, its tier included, as ``set(_:for:options:)`` does.
    ///   - dryRun: Whether to roll the transaction back: the outcomes say what a write would do.
    /// - Returns: One outcome per item, in order.
    /// - Throws: what ``set(_:for:options:)`` throws for any item (and then nothing is written).
    package func setAll(
        _ items: [(space: ProtectionSpace, credential: Credential)], replacingDifferent: Bool, dryRun: Bool
    ) throws -> [BatchWriteOutcome] {
        for (space, credential) in items { try credential.validate(in: space) }
        var outcomes: [BatchWriteOutcome] = []
        outcomes.reserveCapacity(items.count)
        try writeBatch(replacingDifferent: replacingDifferent, dryRun: dryRun) { write in
            for (space, credential) in items { outcomes.append(try write(space, credential)) }
        }
        return outcomes
    }

    /// Stores what `body` hands to `write`, in one transaction, as ``setAll(_:replacingDifferent:dryRun:)``
    /// does; for a caller that reads its credentials as it writes them (an import streaming a
    /// file), so that none of them is held beyond its own write.
    ///
    /// `write` validates each credential, and returns at once what became of it. When `body` or
    /// a `write` throws, nothing is written.
    package func writeBatch(
        replacingDifferent: Bool, dryRun: Bool,
        _ body: (_ write: (ProtectionSpace, Credential) throws -> BatchWriteOutcome) throws -> Void
    ) throws {
        try mutate(dryRun: dryRun, smallPageCache: true) { mutation in
            try body { space, credential in
                try credential.validate(in: space)
                // As `set` does: a credential kept nowhere changes nothing.
                guard credential.persistence != .none else { return .unchanged }
                let outcome: BatchWriteOutcome
                switch try mutation.stored(user: credential.user, in: space) {
                case nil:
                    outcome = .added
                case let existing? where existing.password == credential.password:
                    return .unchanged
                case _? where replacingDifferent:
                    outcome = .updated
                default:
                    return .keptDifferent
                }
                try mutation.set(credential, in: space, makeDefault: false)
                try mutation.keepSyncRegistersIfMany()
                return outcome
            }
        }
    }
}
