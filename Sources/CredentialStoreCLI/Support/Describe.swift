package import CredentialStore
import CredentialStoreFormats
package import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The words the CLI uses for spaces, methods, tiers and dates, in tables and JSON alike (but
/// for the one JSON method word, ``methodJSON(_:)``).
package enum Describe {
    /// The `--method` word for a method (`basic`, `digest`, `any` …), or Foundation's name for others.
    package static func method(_ method: AuthenticationMethod) -> String {
        MethodName.allCases.first { $0.authenticationMethod == method }?.rawValue ?? method.rawValue
    }

    /// The `method` value of the JSON outputs: the `--method` word, except that
    /// `AuthenticationMethod.default` stays `"default"`, the word the JSON outputs have always
    /// used for it (their values keep their meaning across versions; docs/cli.md).
    package static func methodJSON(_ method: AuthenticationMethod) -> String {
        method == .default ? MethodName.default.rawValue : self.method(method)
    }

    /// `https://api.example.com:443`, or `proxy http://proxy.example.com:3128`, with the realm.
    package static func space(_ space: ProtectionSpace) -> String {
        if let endpoint = TLSEndpoint(space: space) {
            return cell("tls \(endpoint) (\(space.authenticationMethod == .clientCertificate ? "client identity" : "server trust"))")
        }
        let host = space.host.contains(":") ? "[\(space.host)]" : space.host
        var text = space.proxyType.map { "proxy \($0.rawValue)://" } ?? "\(space.protocol ?? "unknown")://"
        text += "\(host):\(space.port)"
        if let realm = space.realm { text += " realm \(String(reflecting: realm))" }
        if space.authenticationMethod != .default { text += " (\(method(space.authenticationMethod)))" }
        // Shown in prompts, `watch` lines and error messages: stored text must not drive the terminal.
        return cell(text)
    }

    /// `api.example.com:8443`, `api.example.com (every port)` or `every host`.
    package static func endpoint(_ endpoint: TLSEndpoint) -> String {
        guard endpoint.host != nil else { return "every host" }
        return cell(endpoint.port == nil ? "\(endpoint) (every port)" : endpoint.description)
    }

    /// The `space` object of the JSON outputs.
    static func spaceJSON(_ space: ProtectionSpace) -> JSONValue {
        .object([
            ("host", .string(space.host)),
            ("port", .number(space.port)),
            ("protocol", .string(space.protocol)),
            ("realm", .string(space.realm)),
            ("method", .string(methodJSON(space.authenticationMethod))),
            ("proxyType", .string(space.proxyType?.rawValue)),
        ])
    }

    /// "1 credential", "2 credentials".
    static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }

    /// A credential's details as JSON members, in docs/cli.md's order: `expires` (ISO 8601, or
    /// null), `expired`, `label`, `comment`, `attributes`, and, `withSecrets`, `refreshToken`.
    static func detailsJSON(_ credential: Credential, withSecrets: Bool, now: Date = Date()) -> [(String, JSONValue)] {
        var members: [(String, JSONValue)] = [
            ("expires", .string(credential.expires.map(timestamp))),
            ("expired", .bool(credential.isExpired(at: now))),
            ("label", .string(credential.label)),
            ("comment", .string(credential.comment)),
            ("attributes", .object(credential.attributes.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
        ]
        if withSecrets { members.append(("refreshToken", .string(credential.refreshToken))) }
        return members
    }

    /// ISO 8601 in UTC to the second, e.g. `2025-01-31T09:30:00Z`.
    ///
    /// A date that no calendar of gmtime(3) reaches (one read from a store or a bundle that an
    /// older version accepted) is printed as the nearest one it does, never a trap.
    package static func timestamp(_ date: Date) -> String {
        let raw = date.timeIntervalSince1970.rounded(.down)
        let limit = Double(Self.latestExpiry)
        var seconds = time_t(raw.isNaN ? 0 : min(max(raw, -limit), limit))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return "\(pad(Int(parts.tm_year) + 1900, 4))-\(pad(Int(parts.tm_mon) + 1))-\(pad(Int(parts.tm_mday)))"
            + "T\(pad(Int(parts.tm_hour))):\(pad(Int(parts.tm_min))):\(pad(Int(parts.tm_sec)))Z"
    }

    /// 9999-12-31T23:59:59Z in seconds since 1970: the latest time credstore stores or prints.
    package static let latestExpiry: Int64 = Credential.expiryRange.upperBound

    private static func pad(_ value: Int, _ width: Int = 2) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// Text for a table cell or a message: control characters (C0, DEL, C1), bidi overrides and
    /// invisible characters shown escaped (``FieldRules/isDisplayControl(_:)``), so a realm or
    /// user name can neither break the table's lines, send the terminal an escape sequence, nor
    /// look like another.
    static func cell(_ text: String) -> String {
        FieldRules.displayEscaped(text)
    }
}
