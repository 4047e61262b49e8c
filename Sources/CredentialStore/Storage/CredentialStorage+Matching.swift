package import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
public import Foundation

extension CredentialStorage {
    /// The credential to answer a request to `url` with.
    ///
    /// The exact space (the URL's scheme, host and port, `realm`, default method) comes first.
    /// Without a realm, and with nothing stored under the exact space, the one space on the same
    /// scheme, host and port that has a default answers. Several such spaces are ambiguous: the
    /// call throws ``/CredentialStoreCore/CredentialStorageError/Code/ambiguousMatch`` naming their realms rather than
    /// guess.
    ///
    /// - Throws: `invalidProtectionSpace` for a URL without a host, `ambiguousMatch`, or the
    ///   store's integrity and I/O errors.
    public func defaultCredential(for url: URL, realm: String? = nil) throws -> Credential? {
        let exact = try ProtectionSpace(url: url, realm: realm)
        if let credential = try defaultCredential(for: exact) { return credential }
        guard realm == nil else { return nil }

        let matches = try defaultsOnOrigin(of: exact).filter { $0.space != exact }
        switch matches.count {
        case 0:
            return nil
        case 1:
            return matches[0].credential
        default:
            let realms = matches.map { $0.space.realm.map { String(reflecting: $0) } ?? "no realm" }.sorted()
            throw CredentialStorageError(.ambiguousMatch,
                "\(url.host ?? "the host") has defaults in several realms (\(realms.joined(separator: ", "))); name the realm")
        }
    }

    /// Every space on the scheme, host and port of `space` (any realm, any method) whose default
    /// rule yields a credential, with that credential.
    func defaultsOnOrigin(of space: ProtectionSpace) throws -> [(space: ProtectionSpace, credential: Credential)] {
        let origin = space.originEncoding
        let keys = keys
        let originIndex = keys.originIndex(space)
        let (rows, choices) = try repository.snapshotRead { reader in
            let rows = try reader.credentials(origin: originIndex)
            return (rows, try reader.defaultChoices(spaces: Set(rows.map(\.spaceIndex))))
        }
        let sessionSpaces = currentSession().spaces.filter { $0.key.originEncoding == origin }

        var results: [(space: ProtectionSpace, credential: Credential)] = []
        var seen = Set<ProtectionSpace>()
        for (spaceIndex, group) in Dictionary(grouping: rows, by: \.spaceIndex) {
            let candidate = try keys.decryptSpace(group[0])
            seen.insert(candidate)
            let sealed = SealedSpace(credentials: group, defaultChoice: choices[spaceIndex])
            if let credential = try resolveDefault(session: sessionSpaces[candidate] ?? .init(), sealed: sealed, keys: keys) {
                results.append((candidate, credential))
            }
        }
        for (candidate, entry) in sessionSpaces where !seen.contains(candidate) {
            if let credential = try resolveDefault(session: entry, sealed: SealedSpace(credentials: [], defaultChoice: nil), keys: keys) {
                results.append((candidate, credential))
            }
        }
        return results
    }
}
