/// Protocol names as the identity table wants them: one lowercase token per protocol, whichever
/// spelling (Apple's values, corelibs' constant names) it arrived in.
package enum ProtocolToken {
    /// corelibs' constant names, lowercased, which it uses as the protocol values themselves.
    package static let foundationPrefix = "nsurlprotectionspace"

    /// What follows the prefix in corelibs' constants, and the protocol each names.
    /// ("NSURLProtectionSpaceHTTPSProxy" used as a protocol still names the https protocol.)
    private static let foundationConstants: [String: String] = [
        "http": "http", "https": "https", "ftp": "ftp",
        "httpproxy": "http", "httpsproxy": "https", "ftpproxy": "ftp", "socksproxy": "socks",
    ]

    /// Only the exact constant names are translated, so canonicalisation is idempotent: a scheme
    /// that merely starts with the prefix (found by fuzzing: the prefix twice, then "http") stays
    /// as it is, rather than losing one prefix per pass.
    package static func canonical(_ name: String) -> String {
        let token = Unicode.nfc(asciiLowercased(name))
        if token.hasPrefix(foundationPrefix), let named = foundationConstants[String(token.dropFirst(foundationPrefix.count))] {
            return named
        }
        return token
    }

    /// The port a space of `token` with port 0 is the same space as. Only the protocols whose
    /// spaces always had it: adding one here would make every stored space of that protocol at
    /// port 0 decode as another space (``registeredPort(_:)`` is where new schemes go).
    package static func defaultPort(_ token: String) -> Int? {
        switch token {
        case "http": 80
        case "https": 443
        case "ftp": 21
        case "ftps": 990
        case "socks": 1080
        default: nil
        }
    }

    /// The port a URL of `scheme` without a port means: IANA's registered port for the schemes
    /// people keep credentials for, so that `postgres://db` and `postgres://db:5432` are one
    /// space. Applied where a URL or a git request names no port, not by the initializer: a
    /// space built with port 0 keeps it (``defaultPort(_:)`` says why).
    package static func registeredPort(_ scheme: String) -> Int? {
        if let port = defaultPort(scheme) { return port }
        return switch scheme {
        case "ssh", "sftp": 22
        case "smtp": 25
        case "ldap": 389
        case "ldaps": 636
        case "imap": 143
        case "imaps": 993
        case "pop3": 110
        case "pop3s": 995
        case "smtps": 465
        case "postgres", "postgresql": 5432
        case "mysql": 3306
        case "redis": 6379
        case "amqp": 5672
        case "amqps": 5671
        case "mongodb": 27017
        default: nil
        }
    }

    /// Lowercases A–Z only: hosts and schemes are case-insensitive in ASCII, and Unicode case
    /// mapping (Turkish dotless i, German ß) must not merge hosts that DNS keeps apart.
    package static func asciiLowercased(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return text }
        return String(decoding: text.utf8.map { ($0 >= 0x41 && $0 <= 0x5A) ? $0 + 0x20 : $0 }, as: UTF8.self)
    }
}
