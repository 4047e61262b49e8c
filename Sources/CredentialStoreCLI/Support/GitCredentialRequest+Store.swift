import CredentialStore
import CredentialStoreFormats
import Foundation

/// What the helper does with a request: reading it from git, and looking up, storing and erasing
/// the credential it names in the store.
extension GitCredentialRequest {
    /// The most lines a request may have, and the most bytes: each line is read a byte at a time
    /// (nothing after the request may be consumed), which a long request would pay for.
    static let maximumLines = 1_000
    static let maximumBytes = 1 << 20

    /// Reads the request; unknown keys (`capability[]`, `state[]`, `ephemeral` …) are ignored.
    static func read(from input: any SecretInput) throws -> GitCredentialRequest {
        var lines: [String] = []
        var bytes = 0
        while let line = try input.readLine(), !line.isEmpty {
            // git sends a dozen short lines; an endless request must not grow without bound.
            bytes += line.utf8.count + 1
            guard lines.count < maximumLines, bytes <= maximumBytes else {
                throw CommandFailure(.dataError, "the request has more than \(maximumLines) lines or \(maximumBytes >> 10) KiB; git sends a dozen short lines")
            }
            lines.append(line)
        }
        return parse(lines)
    }

    /// The same space without a realm: a credential approved without a challenge serves any realm.
    fileprivate func realmless(_ space: ProtectionSpace) -> ProtectionSpace {
        ProtectionSpace(host: space.host, port: space.port, protocol: space.protocol, realm: nil)
    }

    /// The credential git should get (expired or not: ``answer(_:now:)`` decides what git sees of
    /// it), with the space it is stored in.
    ///
    /// The exact space first (and, for a challenge's realm, the realm-less space); without path
    /// or challenge, the one space on the origin with a default (or with `username`). Several
    /// realms answer nothing, and are reported on `console` when there is one.
    ///
    /// Live credentials first, in that whole order: an expired one in the exact or the realm-less
    /// space must not hide a live one of the origin's one realm, and an expired realm is not one of
    /// "several realms". Only when nothing live answers, the expired one (git gets its refresh
    /// token, or learns on stderr why it gets nothing); an expired credential without a realm is
    /// still the one the user chose for git, so it answers before live realms that are ambiguous.
    func resolve(in storage: CredentialStorage, space: ProtectionSpace, console: Console?)
        throws -> (space: ProtectionSpace, credential: Credential)? {
        var ambiguous: Set<String?>?
        for includingExpired in [false, true] {
            switch try resolve(in: storage, space: space, includingExpired: includingExpired, fallingBackToOrigin: ambiguous == nil) {
            case .found(let space, let credential):
                return (space, credential)
            case .severalRealms(let realms):
                ambiguous = realms
            case .nothing:
                continue
            }
        }
        if let ambiguous {
            // stderr is shown to the user by git; stdout must stay empty so git asks elsewhere.
            // git names no realm here, so the remedy is a credential without one, which answers first.
            let names = ambiguous.map { $0.map { Describe.cell(String(reflecting: $0)) } ?? "no realm" }.sorted()
            console?.errors.write("credstore: \(Describe.cell(space.host)) has credentials in several realms (\(names.joined(separator: ", "))); "
                + "store the one git should use without a realm (credstore add \(Describe.space(space)) --user NAME)\n")
        }
        return nil
    }

    /// What one pass of ``resolve(in:space:console:)`` found.
    private enum Resolution {
        case found(ProtectionSpace, Credential)
        case severalRealms(Set<String?>)
        case nothing
    }

    /// One pass of ``resolve(in:space:console:)``: live credentials only, or expired ones too; the
    /// origin's one realm only when `fallingBackToOrigin`.
    private func resolve(
        in storage: CredentialStorage, space: ProtectionSpace, includingExpired: Bool, fallingBackToOrigin: Bool
    ) throws -> Resolution {
        var candidates = [space]
        if path?.isEmpty ?? true, space.realm != nil { candidates.append(realmless(space)) }
        for candidate in candidates {
            if let found = try lookUp(in: storage, space: candidate, includingExpired: includingExpired) {
                return .found(found.space, found.credential)
            }
        }
        guard space.realm == nil, fallingBackToOrigin else { return .nothing }
        // git sends what it gets as Basic: only spaces whose credentials may go out as Basic (any
        // method, or Basic's), never one stored for Digest, NTLM or a form.
        let sendable = AuthenticationMethod.sentAsBasic
        let now = Date()
        // Through the origin index: the origin's rows only, never a scan of the store.
        let spaces = try storage.entries(onOriginOf: space).filter { entry in
            guard entry.space.proxyType == nil, entry.space.protocol == space.protocol, entry.space.host == space.host,
                  entry.space.port == space.port, sendable.contains(entry.space.authenticationMethod) else { return false }
            guard let username else { return includingExpired ? entry.isDefaultEvenIfExpired : entry.isDefault }
            return entry.user == username && (includingExpired || !entry.isExpired(at: now))
        }.map(\.space)
        let realms = Set(spaces.map(\.realm))
        guard realms.count <= 1 else { return .severalRealms(realms) }
        // One realm, perhaps under both password methods: the one a lookup without a method asks first.
        let only = spaces.min { sendable.firstIndex(of: $0.authenticationMethod)! < sendable.firstIndex(of: $1.authenticationMethod)! }
        guard let only, let found = try lookUp(in: storage, space: only, includingExpired: includingExpired) else { return .nothing }
        return .found(found.space, found.credential)
    }

    /// The credential for `space` (or a compatible method's space of its realm), with the space it
    /// is stored in: an erase must remove that one, not a credential of the same user in `space`.
    ///
    /// With a user name, that user's credential in the first compatible space holding one; when
    /// git also names the password (an erase), the one with that password: what a `get` without
    /// the user name gave git may be the user's credential in a later space. Expired credentials
    /// only with `includingExpired`, which is the last pass: only then does a credential of the
    /// user with another password answer, so that an erase first finds the one with its password,
    /// expired or not.
    fileprivate func lookUp(in storage: CredentialStorage, space: ProtectionSpace, includingExpired: Bool)
        throws -> (space: ProtectionSpace, credential: Credential)? {
        guard let username else {
            return try storage.defaultCredentialAndSpace(for: space, includingExpired: includingExpired)
        }
        let now = Date()
        var first: (space: ProtectionSpace, credential: Credential)?
        for candidate in space.compatibleSpaces {
            guard let credential = try storage.credentials(for: candidate)[username],
                  includingExpired || !credential.isExpired(at: now) else { continue }
            if password == nil || credential.password == password { return (candidate, credential) }
            first = first ?? (candidate, credential)
        }
        return includingExpired ? first : nil
    }

    /// Saves the credential as the space's default (git's latest approval wins), with the
    /// password's expiry and the OAuth refresh token git sent (none when git sent none: they
    /// belonged to the password this one replaces).
    ///
    /// An empty user name and password are kept too: git approves them for a host that needs no
    /// login (single sign-on), and expects them back.
    func store(in storage: CredentialStorage, space: ProtectionSpace) throws {
        // git sends store only after a success, with both fields; anything less is not a credential.
        guard let username, let password else { return }
        // git approves what a get gave it: when that is still the answer (a compatible method's
        // space, the origin's without a realm, or the one realm on the origin), it stays where it
        // is stored. A copy here would answer first from then on, so removing or replacing the
        // credential where the user keeps it would no longer stop git from sending it. An expired
        // answer with a refresh token gave git that token, and git now stores the password it got
        // with it: that replaces the expired one where it is, with the new token. An expired one
        // without a token gave git nothing, so a password from elsewhere does not go there.
        var target = space
        var existing = try storage.credentials(for: space)[username]
        if let found = try resolve(in: storage, space: space, console: nil), found.space != space, found.credential.user == username,
           found.credential.password == password || (found.credential.isExpired(at: Date()) && found.credential.refreshToken != nil) {
            (target, existing) = (found.space, found.credential)
        }
        // A credential already shared with other machines stays shared; its label, comment and
        // attributes stay as the user set them.
        var credential = existing ?? Credential(user: username, password: password)
        credential.password = password
        if credential.persistence != .synchronizable { credential.persistence = .permanent }
        credential.expiresEpochSeconds = passwordExpiry
        credential.refreshToken = refreshToken
        try storage.setDefaultCredentialExactly(credential, for: target)
    }

    /// Removes the matching credential, with its expiry and refresh token.
    ///
    /// When git names the password (it does after a rejection), a credential whose password has
    /// changed since is kept: another process stored a newer one.
    func erase(in storage: CredentialStorage, space: ProtectionSpace, console: Console) throws {
        guard case let (found, credential)? = try resolve(in: storage, space: space, console: console) else { return }
        if let password, password != credential.password { return }
        // git erases a credential the server refused: it is wrong on every machine.
        try storage.remove(user: credential.user, for: found, options: .removeSynchronizable)
    }
}
