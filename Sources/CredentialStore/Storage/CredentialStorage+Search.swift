public import CredentialStoreCore
import Foundation

/// What ``CredentialStorage/credentials(matching:)`` selects: every condition set must hold.
public struct CredentialQuery: Hashable, Sendable {
    /// A host, or a pattern where `*` stands for any run of characters (`*.example.com`),
    /// compared with the stored host (lowercased, IDNA-encoded as spaces keep it).
    public var host: String?
    /// The label, compared exactly.
    public var label: String?
    /// Attributes the credential must carry with exactly these values.
    public var attributes: [String: String]
    /// The tier.
    public var persistence: Persistence?
    /// `true` for expired credentials only, `false` for those not expired, `nil` for both.
    public var expired: Bool?

    /// A query; with no condition it selects every credential.
    public init(
        host: String? = nil, label: String? = nil, attributes: [String: String] = [:], persistence: Persistence? = nil,
        expired: Bool? = nil
    ) {
        self.host = host
        self.label = label
        self.attributes = attributes
        self.persistence = persistence
        self.expired = expired
    }

    /// Whether `entry` meets every condition, at `now`.
    func matches(_ entry: CredentialEntry, now: Date) -> Bool {
        if let persistence, entry.persistence != persistence { return false }
        if let label, entry.label != label { return false }
        if let expired, entry.isExpired(at: now) != expired { return false }
        for (name, value) in attributes where entry.attributes[name] != value { return false }
        if let host, !Self.host(entry.space.host, matches: host) { return false }
        return true
    }

    /// `*` matches any run of characters (none included); everything else matches itself, without
    /// regard to ASCII case.
    static func host(_ host: String, matches pattern: String) -> Bool {
        let parts = pattern.lowercased().split(separator: "*", omittingEmptySubsequences: false).map(String.init)
        var rest = Substring(host.lowercased())
        guard parts.count > 1 else { return rest == parts[0] }
        guard rest.hasPrefix(parts[0]) else { return false }
        rest = rest.dropFirst(parts[0].count)
        for part in parts.dropFirst().dropLast() where !part.isEmpty {
            guard let range = rest.range(of: part) else { return false }
            rest = rest[range.upperBound...]
        }
        let last = parts.last!
        return rest.count >= last.count && rest.hasSuffix(last)
    }
}

extension CredentialStorage {
    /// The credentials `query` selects, without passwords or refresh tokens, sorted as
    /// ``entries()``: host, port, realm, user.
    ///
    /// A search reads every entry, as ``entries()`` does, checked against the seal: no condition is
    /// served from an index yet (docs/performance.md, "Search").
    public func credentials(matching query: CredentialQuery) throws -> [CredentialEntry] {
        let now = Date(timeIntervalSince1970: Double(clock.now()) / 1000)
        return try entries().filter { query.matches($0, now: now) }
    }
}
