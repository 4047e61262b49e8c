package import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence

/// What a batch write did, or would do in a dry run, with one of its credentials.
package enum BatchWriteOutcome: Sendable, Hashable {
    /// The space had no credential for the user; it has one now.
    case added
    /// The space held another password for the user, replaced because the batch allowed it.
    case updated
    /// The space already held the same user and password; nothing was written for it.
    case unchanged
    /// The space holds another password for the user, left as it is: the batch does not replace.
    case keptDifferent
}

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
        return try mutate(dryRun: dryRun) { mutation in
            var outcomes: [BatchWriteOutcome] = []
            outcomes.reserveCapacity(items.count)
            mutation.reserveChanges(items.count)
            for (space, credential) in items {
                // As `set` does: a credential kept nowhere changes nothing.
                guard credential.persistence != .none else {
                    outcomes.append(.unchanged)
                    continue
                }
                let existing = try mutation.stored(user: credential.user, in: space)
                switch existing {
                case nil:
                    outcomes.append(.added)
                case let existing? where existing.password == credential.password:
                    outcomes.append(.unchanged)
                    continue
                case _? where replacingDifferent:
                    outcomes.append(.updated)
                default:
                    outcomes.append(.keptDifferent)
                    continue
                }
                try mutation.set(credential, in: space, makeDefault: false)
            }
            return outcomes
        }
    }
}

extension Mutation {
    /// The credential `space` holds for `user` as this transaction sees it: the session tier's,
    /// else the stored row's.
    func stored(user: String, in space: ProtectionSpace) throws -> Credential? {
        if let session = session[space].credentials[user] { return session }
        let spaceIndex = keys.spaceIndex(space)
        return try transaction.credential(space: spaceIndex, user: keys.userIndex(spaceIndex: spaceIndex, user: user))
            .map(keys.decryptCredential)
    }
}
