import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import Foundation

extension CredentialStorage {
    /// The credential that answers `request`, with the space it is the default of.
    ///
    /// For ``CredentialRequest/challenge(_:)``, one order, the first space with a default
    /// answering:
    /// 1. the challenge's space itself;
    /// 2. the same realm under a compatible method (``defaultCredential(for:)``: for Basic the
    ///    credential stored without a method, for Digest that one and then Basic's);
    /// 3. the same origin's credential stored without a realm, under a compatible method — how
    ///    `credstore add https://host --user bob` and `ProtectionSpace(url:)` store it.
    ///
    /// Never anything else: not another realm, scheme, host or port, never a proxy's credential
    /// for a server or a server's for a proxy (they are different origins), and never a
    /// credential stored for Digest when the space asks for Basic, which would send its password
    /// in the clear. A challenge that names no realm (`nil` or `""`) names no protection space and
    /// is answered with nothing, whatever the origin holds.
    ///
    /// For ``CredentialRequest/request(_:realm:)`` with a realm, the answer is the challenge's for
    /// the URL's scheme, host and port, that realm and no particular method (any password method).
    /// Without a realm, the space without a realm comes first; with nothing stored there, the one
    /// realm on the same scheme, host and port whose default may be sent as Basic (stored for any
    /// method or for Basic, never for Digest, NTLM or a form) answers. Several such realms are
    /// ambiguous: the call throws ``/CredentialStoreCore/CredentialStorageError/Code/ambiguousMatch``
    /// naming their realms rather than guess.
    ///
    /// - Throws: `invalidProtectionSpace` for a space no store may hold or a URL without a host,
    ///   `ambiguousMatch`, or the store's integrity and I/O errors.
    public func defaultCredential(answering request: CredentialRequest) throws -> CredentialMatch? {
        switch request {
        case .challenge(let space):
            return try match(answering: space)
        case .request(let url, let realm):
            return try match(requestTo: url, realm: realm)
        }
    }

    private func match(answering space: ProtectionSpace) throws -> CredentialMatch? {
        try space.validate()
        guard let realm = space.realm, !realm.isEmpty else { return nil }
        let found = try defaultCredentialAndSpace(for: space)
            ?? defaultCredentialAndSpace(for: space.replacing(realm: nil, authenticationMethod: space.authenticationMethod))
        return found.map { CredentialMatch(space: $0.space, credential: $0.credential) }
    }

    private func match(requestTo url: URL, realm: String?) throws -> CredentialMatch? {
        let exact = try ProtectionSpace(url: url, realm: realm)
        if let realm, !realm.isEmpty { return try match(answering: exact) }
        if let found = try defaultCredentialAndSpace(for: exact) { return CredentialMatch(space: found.space, credential: found.credential) }
        guard realm == nil else { return nil }

        // A lookup without a method asks for any password method: never a credential stored for
        // Digest (the caller may send it as Basic), NTLM or a form. One answer per realm, the
        // method a lookup without one asks first.
        let sendable = AuthenticationMethod.sentAsBasic
        let matches = Dictionary(grouping: try defaultsOnOrigin(of: exact).filter {
            $0.space != exact && sendable.contains($0.space.authenticationMethod)
        }, by: \.space.realm).values.map { spaces in
            spaces.min { sendable.firstIndex(of: $0.space.authenticationMethod)! < sendable.firstIndex(of: $1.space.authenticationMethod)! }!
        }
        switch matches.count {
        case 0:
            return nil
        case 1:
            return CredentialMatch(space: matches[0].space, credential: matches[0].credential)
        default:
            let realms = matches.map { $0.space.realm.map { String(reflecting: $0) } ?? "no realm" }.sorted()
            throw CredentialStorageError(.ambiguousMatch,
                "\(url.host ?? "the host") has defaults in several realms (\(realms.joined(separator: ", "))); name the realm")
        }
    }

    /// The credential rows on the origin of `space` and their spaces' default choices, in one
    /// snapshot, checked against the seal tree: the origin's leaf (no row of it missing, older or
    /// foreign) and each space's.
    func checkedOriginRows(of space: ProtectionSpace, keys: StoreKeyring) throws -> (rows: [SealedCredential], choices: [BlindIndex: SealedDefault]) {
        let originIndex = keys.originIndex(space)
        return try repository.snapshotRead { reader in
            let rows = try reader.credentials(origin: originIndex)
            let choices = try reader.defaultChoices(spaces: Set(rows.map(\.spaceIndex)))
            try checkLeaves([SealChecks.originClaim(originIndex, rows, keys: keys)] + Dictionary(grouping: rows, by: \.spaceIndex).map {
                SealChecks.spaceClaim($0.key, SealedSpace(credentials: $0.value, defaultChoice: choices[$0.key]), keys: keys)
            }, reader: reader, keys: keys)
            return (rows, choices)
        }
    }

    /// Every space on the scheme, host and port of `space` (any realm, any method) whose default
    /// rule yields a credential that has not expired, with that credential.
    func defaultsOnOrigin(of space: ProtectionSpace) throws -> [(space: ProtectionSpace, credential: Credential)] {
        let now = clock.now()
        return try allDefaultsOnOrigin(of: space).filter { found in
            !Credential.hasPassed(found.credential.expiresEpochSeconds, at: now / 1000)
        }
    }

    private func allDefaultsOnOrigin(of space: ProtectionSpace) throws -> [(space: ProtectionSpace, credential: Credential)] {
        let origin = space.originEncoding
        let keys = keys
        let (rows, choices) = try checkedOriginRows(of: space, keys: keys)
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
