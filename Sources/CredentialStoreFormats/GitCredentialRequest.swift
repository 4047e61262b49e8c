package import CredentialStore
package import Foundation

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
            throw FormatError("the stored \(key) of \(credential.user) holds a line break or NUL, which would inject lines into git's credential protocol; nothing was given to git (replace it with `credstore add`)")
        }
        return fields.map { "\($0)=\($1)\n" }.joined()
    }

    /// Parses the lines of a request.
    package static func parse(_ lines: [String]) -> GitCredentialRequest {
        var request = GitCredentialRequest()
        for line in lines {
            // By Unicode scalars, as git reads bytes: `=` followed by a combining mark is one
            // Character, which equals no `=`.
            let scalars = line.unicodeScalars
            guard let equals = scalars.firstIndex(of: "=") else { continue }
            let value = String(Substring(scalars[scalars.index(after: equals)...]))
            switch String(Substring(scalars[..<equals])) {
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
        // `host` may carry a port: `example.com:8443` or `[::1]:8443`, spelled as a URL's port
        // must be (digits, no leading zero, 1 to 65535): `:0`, `:00443` or `:+443` name no space.
        // By Unicode scalars, as git reads bytes (see ``parse(_:)``).
        let scalars = host.unicodeScalars
        if let colon = scalars.lastIndex(of: ":"), scalars.last != "]",
           scalars.first == "[" || scalars.firstIndex(of: ":") == colon {
            let digits = Substring(scalars[scalars.index(after: colon)...])
            guard !digits.isEmpty, digits.utf8.count <= 5, digits.utf8.first != UInt8(ascii: "0"),
                  digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let number = Int(digits), number <= 65_535 else { return nil }
            name = String(Substring(scalars[..<colon]))
            port = number
        }
        if name.unicodeScalars.first == "[", name.unicodeScalars.last == "]" {
            name = String(Substring(name.unicodeScalars.dropFirst().dropLast()))
        }
        // As a URL without a port: `protocol=postgres` is the space of postgres://HOST.
        if port == 0 { port = ProtocolToken.registeredPort(ProtocolToken.canonical(`protocol`)) ?? 0 }
        let space = ProtectionSpace(host: name, port: port, protocol: `protocol`, realm: realm)
        return space.host.isEmpty ? nil : space
    }

    /// The realm of a `Basic` or `Digest` challenge in one WWW-Authenticate value, if it names one.
    ///
    /// Read with the library's RFC 7235 parser; a header it cannot read names no realm.
    package static func challengeRealm(_ header: String) -> String? {
        guard let challenges = try? AuthenticationChallenge.parse([header]) else { return nil }
        return challenges.first { $0.scheme == "basic" || $0.scheme == "digest" }?.realm
    }
}
