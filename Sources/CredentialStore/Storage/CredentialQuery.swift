public import CredentialStoreCore
import Foundation

/// What ``CredentialStorage/entries(matching:)`` selects: every condition set must hold.
public struct CredentialQuery: Hashable, Sendable {
    /// A host, or a pattern where `*` stands for any run of characters (`*.example.com`),
    /// compared with the stored host (lowercased, IDNA-encoded as spaces keep it).
    public var host: String?
    /// The label, compared exactly.
    public var label: String?
    /// Attributes the credential must carry with exactly these values.
    public var attributes: [String: String]
    /// The tier, `nil` for every tier. No credential is kept in ``/CredentialStoreCore/Persistence/none``,
    /// so a query for it selects nothing.
    public var persistence: Persistence?
    /// `true` for expired credentials only, `false` for those not expired, `nil` for both.
    public var expired: Bool?

    /// The query with no condition: every credential.
    public static let all = CredentialQuery()

    /// A query of every tier; with no condition it selects every credential.
    public init(host: String? = nil, label: String? = nil, attributes: [String: String] = [:], expired: Bool? = nil) {
        self.host = host
        self.label = label
        self.attributes = attributes
        self.persistence = nil
        self.expired = expired
    }

    /// A query of one tier. A separate form, not an optional parameter: with `Persistence?`,
    /// Swift reads `.none` as `nil`, and a query for the tier that holds nothing would select
    /// every credential.
    public init(
        host: String? = nil, label: String? = nil, attributes: [String: String] = [:], persistence: Persistence, expired: Bool? = nil
    ) {
        self.init(host: host, label: label, attributes: attributes, expired: expired)
        self.persistence = persistence
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
