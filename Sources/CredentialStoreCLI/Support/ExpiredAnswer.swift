import ArgumentParser
import CredentialStore
import Foundation

/// What `get` and the git helper say when the credential that would answer has expired: whose,
/// for which space, since when, and the command that renews it.
enum ExpiredAnswer {
    /// `the credential of alice for https://old.example.com:443 expired at 2001-01-01T00:00:00Z;
    /// renew it with `credstore add https://old.example.com --user alice --expires TIME``.
    ///
    /// - Parameter url: the URL as the command line gave it; nil to name the space's own.
    static func message(_ credential: Credential, in space: ProtectionSpace, url: String?) -> String {
        let since = credential.expires.map { " at \(Describe.timestamp($0))" } ?? ""
        return "the credential of \(Describe.cell(credential.user)) for \(Describe.space(space)) expired\(since); "
            + "renew it with `\(renewal(user: credential.user, space: space, url: url))`"
    }

    /// ``message(_:in:url:)`` as the failure `get` ends with.
    static func failure(_ credential: Credential, in space: ProtectionSpace, url: String?) -> CommandFailure {
        CommandFailure(.expired, message(credential, in: space, url: url))
    }

    /// The failure of a `get` whose URL best match would be one of several realms' defaults, each
    /// of which has expired: naming a realm would not help, renewing one would.
    static func failure(realms: [String?], on space: ProtectionSpace, url: String) -> CommandFailure {
        let names = realms.map { $0.map { String(reflecting: $0) } ?? "no realm" }.sorted()
        return CommandFailure(.expired, "the defaults of \(Describe.space(space)) in realms \(Describe.cell(names.joined(separator: ", "))) have all expired; "
            + "renew one with `\(Describe.cell(ShellWords.joined(["credstore", "add", url])) + " --realm REALM --user NAME --expires TIME")`")
    }

    /// `credstore add URL [--realm R] [--method M] [--proxy T] --user U --expires TIME`: a new
    /// password for exactly this credential, with the new password's expiry (the one that has
    /// passed goes with the old password).
    static func renewal(user: String, space: ProtectionSpace, url: String?) -> String {
        var words = ["credstore", "add", url ?? self.url(of: space)]
        if let realm = space.realm { words += ["--realm", realm] }
        if space.authenticationMethod != .default { words += ["--method", Describe.method(space.authenticationMethod)] }
        if let proxy = space.proxyType { words += ["--proxy", proxy.rawValue] }
        words += ["--user", user]
        return Describe.cell(ShellWords.joined(words) + " --expires TIME")
    }

    /// `https://host:port` (a proxy's `http://host:port`, which `--proxy` reads as host and port).
    static func url(of space: ProtectionSpace) -> String {
        let host = space.host.contains(":") ? "[\(space.host)]" : space.host
        let scheme = space.proxyType == nil ? space.protocol ?? "https" : "http"
        return "\(scheme)://\(host):\(space.port)"
    }
}
