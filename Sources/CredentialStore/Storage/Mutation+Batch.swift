import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence

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
