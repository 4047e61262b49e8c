import ArgumentParser
package import CredentialStore
package import Foundation

/// `credstore git-credential get|store|erase`: a git credential helper.
///
/// git runs the helper string with the action appended (`credstore git-credential get`), writes
/// `key=value` lines on its standard input and, for `get`, reads `key=value` lines back. So the
/// action is the last argument, options go before it, and nothing but protocol lines may ever reach
/// standard output.
struct GitCredentialCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "git-credential",
        _superCommandName: CredstoreCommand.name,
        abstract: "A git credential helper: git runs it with get, store or erase.",
        discussion: """
            Set it up with `git config --global credential.helper "/usr/local/bin/credstore \
            git-credential"`. git writes protocol, host, path, username, password, \
            password_expiry_utc, oauth_refresh_token and wwwauth[] lines on standard input. With \
            credential.useHttpPath, the path becomes the realm "git:PATH", so each repository \
            has its own credential; otherwise a Basic or Digest realm in wwwauth[] picks the \
            realm. An expired password is not returned. Exit 0 when nothing matched: git treats \
            an empty answer as "ask someone else".
            """)

    @Argument(help: ArgumentHelp("What git asks: get, store or erase (others are ignored, as git's protocol wants).", valueName: "action"))
    var action: String

    @OptionGroup var global: GlobalOptions

    func run() throws {
        try run(then: .returnToCaller)
    }

    /// Answers git; with `.exitProcess`, a `get` ends the process once it has answered, as
    /// `credstore get` does (see ``Lookup/Completion``): git runs it on every fetch and push.
    func run(then completion: Lookup.Completion) throws {
        let console = Console.current
        // git may add actions in future versions; a helper ignores those it does not know.
        guard ["get", "store", "erase"].contains(action) else { return }
        let request = try GitCredentialRequest.read(from: console.secrets)
        guard let space = request.space else { return }
        let location = global.location(in: console)
        switch action {
        case "get":
            // As `credstore get`: the lookup checks the rows it reads against the seal tree.
            guard let storage = try location.openIfPresent(console) else { return }
            if case let (found, credential)? = try request.resolve(in: storage, space: space, console: console) {
                let answer = try GitCredentialRequest.answer(credential, now: Date())
                // Expired with no refresh token: git gets nothing and asks elsewhere (exit 0, as
                // its protocol wants); its user reads why on stderr, which git passes through.
                if answer.isEmpty {
                    console.errors.write("credstore: \(ExpiredAnswer.message(credential, in: found, url: nil))\n")
                }
                console.output.write(answer)
            }
            if completion == .exitProcess {
                withExtendedLifetime(storage) { Foundation.exit(ExitCode.success.rawValue) }
            }
        case "store":
            try request.store(in: location.openOrCreate(console), space: space)
        default:
            guard let storage = try location.openIfPresent(console) else { return }
            try request.erase(in: storage, space: space, console: console)
        }
    }
}

/// What git sent on standard input: one `key=value` per line, ended by a blank line or the end.
package struct GitCredentialRequest: Equatable {
    package var `protocol`: String?
    package var host: String?
    package var path: String?
    package var username: String?
    package var password: String?
    package var passwordExpiry: Int64?
    package var refreshToken: String?
    package var wwwAuthenticate: [String] = []

    /// Reads the request; unknown keys (`capability[]`, `state[]`, `ephemeral` …) are ignored.
    package static func read(from input: any SecretInput) throws -> GitCredentialRequest {
        var lines: [String] = []
        while let line = try input.readLine(), !line.isEmpty { lines.append(line) }
        return parse(lines)
    }

    /// The lines git reads back for `get`: the user name and password, with the password's
    /// expiry and the OAuth refresh token when the credential has them. An expired credential
    /// gives git its user name and refresh token without the stale password, so that git asks the
    /// next helper (an OAuth helper refreshes with the token); without a refresh token it gives
    /// nothing.
    ///
    /// Every value is checked again right before it is written, whatever the store let in (a
    /// store written by an older version, say): a value with a CR, LF or NUL would end its line
    /// early, and git takes what follows as more fields (`host=`, `username=`, `quit=1`).
    ///
    /// - Throws: a data error (65), and nothing is written, when a value would break its line.
    package static func answer(_ credential: Credential, now: Date) throws -> String {
        var fields = [("username", credential.user)]
        if credential.isExpired(at: now) {
            guard credential.refreshToken != nil else { return "" }
        } else {
            fields.append(("password", credential.password))
            if let expiry = credential.expiresEpochSeconds { fields.append(("password_expiry_utc", String(expiry))) }
        }
        if let token = credential.refreshToken { fields.append(("oauth_refresh_token", token)) }
        for (key, value) in fields where !FieldRules.isLineSafe(value) {
            throw CommandFailure(.dataError, "the stored \(key) of \(credential.user) holds a line break or NUL, which would inject lines into git's credential protocol; nothing was given to git (replace it with `credstore add`)")
        }
        return fields.map { "\($0)=\($1)\n" }.joined()
    }

    /// Parses the lines of a request.
    package static func parse(_ lines: [String]) -> GitCredentialRequest {
        var request = GitCredentialRequest()
        for line in lines {
            guard let equals = line.firstIndex(of: "=") else { continue }
            let value = String(line[line.index(after: equals)...])
            switch line[..<equals] {
            case "protocol": request.protocol = value
            case "host": request.host = value
            case "path": request.path = value
            case "username": request.username = value
            case "password": request.password = value
            // As git reads it: 0, or a value out of range, is no expiry.
            case "password_expiry_utc": request.passwordExpiry = Int64(value).flatMap { $0 > 0 ? $0 : nil }
            case "oauth_refresh_token": request.refreshToken = value
            case "wwwauth[]":
                // git sends an empty `wwwauth[]=` to reset the list.
                if value.isEmpty { request.wwwAuthenticate.removeAll() } else { request.wwwAuthenticate.append(value) }
            default: continue
            }
        }
        return request
    }

    /// The realm the request names: `git:PATH` with useHttpPath (so each repository's credential
    /// is its own), else the first Basic or Digest challenge's realm, else none.
    package var realm: String? {
        if let path, !path.isEmpty { return "git:" + path }
        return wwwAuthenticate.lazy.compactMap(Self.challengeRealm).first
    }

    /// The space to store under: protocol, host and port, and ``realm``; nil without a host.
    package var space: ProtectionSpace? {
        guard let `protocol`, !`protocol`.isEmpty, let host, !host.isEmpty else { return nil }
        var name = host
        var port = 0
        // `host` may carry a port: `example.com:8443` or `[::1]:8443`.
        if let colon = host.lastIndex(of: ":"), !host.hasSuffix("]"),
           host.hasPrefix("[") || host.firstIndex(of: ":") == colon,
           let number = Int(host[host.index(after: colon)...]) {
            name = String(host[..<colon])
            port = number
        }
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        let space = ProtectionSpace(host: name, port: port, protocol: `protocol`, realm: realm)
        return space.host.isEmpty ? nil : space
    }

    /// The same space without a realm: a credential approved without a challenge serves any realm.
    private func realmless(_ space: ProtectionSpace) -> ProtectionSpace {
        ProtectionSpace(host: space.host, port: space.port, protocol: space.protocol, realm: nil)
    }

    /// The credential git should get (expired or not: ``answer(_:now:)`` decides what git sees of
    /// it), with the space it is stored in.
    ///
    /// The exact space first (and, for a challenge's realm, the realm-less space); without path
    /// or challenge, the one space on the origin with a default (or with `username`).
    func resolve(in storage: CredentialStorage, space: ProtectionSpace, console: Console)
        throws -> (space: ProtectionSpace, credential: Credential)? {
        var candidates = [space]
        if path?.isEmpty ?? true, space.realm != nil { candidates.append(realmless(space)) }
        for candidate in candidates {
            if let found = try lookUp(in: storage, space: candidate) {
                return found
            }
        }
        guard space.realm == nil else { return nil }
        // git sends what it gets as Basic: only spaces whose credentials may go out as Basic (any
        // method, or Basic's), never one stored for Digest, NTLM or a form.
        let sendable = AuthenticationMethod.sentAsBasic
        // Through the origin index: the origin's rows only, never a scan of the store.
        let spaces = try storage.entries(onOriginOf: space).filter { entry in
            entry.space.proxyType == nil && entry.space.protocol == space.protocol && entry.space.host == space.host
                && entry.space.port == space.port && sendable.contains(entry.space.authenticationMethod)
                && (username.map { $0 == entry.user } ?? entry.isDefaultEvenIfExpired)
        }.map(\.space)
        guard Set(spaces.map(\.realm)).count <= 1 else {
            // stderr is shown to the user by git; stdout must stay empty so git asks elsewhere.
            console.errors.write("credstore: \(Describe.cell(space.host)) has credentials in several realms; set credential.useHttpPath or remove the extra ones (see `credstore list`)\n")
            return nil
        }
        // One realm, perhaps under both password methods: the one a lookup without a method asks first.
        let only = spaces.min { sendable.firstIndex(of: $0.authenticationMethod)! < sendable.firstIndex(of: $1.authenticationMethod)! }
        guard let only, let found = try lookUp(in: storage, space: only) else { return nil }
        return found
    }

    /// The credential for `space` (or a compatible method's space of its realm), with the space it
    /// is stored in: an erase must remove that one, not a credential of the same user in `space`.
    ///
    /// With a user name, that user's credential in the first compatible space holding one; when
    /// git also names the password (an erase), the one with that password: what a `get` without
    /// the user name gave git may be the user's credential in a later space.
    private func lookUp(in storage: CredentialStorage, space: ProtectionSpace) throws -> (space: ProtectionSpace, credential: Credential)? {
        // A live default first: an expired one of the exact space must not hide a live one of a
        // compatible method's; only when there is none, the expired one (for its refresh token).
        guard let username else {
            return try storage.defaultCredentialAndSpace(for: space) ?? storage.defaultCredentialAndSpace(for: space, includingExpired: true)
        }
        var first: (space: ProtectionSpace, credential: Credential)?
        for candidate in space.compatibleSpaces {
            guard let credential = try storage.credentials(for: candidate)[username] else { continue }
            if password == nil || credential.password == password { return (candidate, credential) }
            first = first ?? (candidate, credential)
        }
        return first
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
        // git approves what a get gave it: when that is still the answer (the default of a
        // compatible method's space, or the origin's without a realm), it stays where it is
        // stored. A copy here would answer first from then on, so removing or replacing the
        // credential where the user keeps it would no longer stop git from sending it.
        var candidates = [space]
        if path?.isEmpty ?? true, space.realm != nil { candidates.append(realmless(space)) }
        var target = space
        var existing = try storage.credentials(for: space)[username]
        for candidate in candidates {
            guard let found = try storage.defaultCredentialAndSpace(for: candidate, includingExpired: true) else { continue }
            if found.space != space, found.credential.user == username, found.credential.password == password {
                (target, existing) = (found.space, found.credential)
            }
            break
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
        try storage.remove(credential, for: found, options: .removeSynchronizable)
    }

    /// The realm of a `Basic` or `Digest` challenge in one WWW-Authenticate value, if it names one.
    ///
    /// Read with the library's RFC 7235 parser; a header it cannot read names no realm.
    package static func challengeRealm(_ header: String) -> String? {
        guard let challenges = try? AuthenticationChallenge.parse([header]) else { return nil }
        return challenges.first { $0.scheme == "basic" || $0.scheme == "digest" }?.realm
    }
}
