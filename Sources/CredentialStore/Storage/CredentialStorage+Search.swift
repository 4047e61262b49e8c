public import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
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
    /// The tier, `nil` for every tier. No credential is kept in ``/CredentialStoreCore/Persistence/none``,
    /// so a query for it selects nothing.
    public var persistence: Persistence?
    /// `true` for expired credentials only, `false` for those not expired, `nil` for both.
    public var expired: Bool?

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

extension CredentialStorage {
    /// The credentials `query` selects, without passwords or refresh tokens, sorted as
    /// ``entries()``: host, port, realm, user.
    ///
    /// A query with a label or attributes is served from their blind indexes: the credentials
    /// that carry its most selective tag, proven against the seal (none missing, none added), and
    /// every condition checked again on each of them once opened. A query without either (host
    /// pattern, tier, expiry, which no index serves) reads every entry, as ``entries()`` does,
    /// checked against the seal. This instance's session credentials are searched in memory
    /// (docs/performance.md, "Search").
    public func credentials(matching query: CredentialQuery) throws -> [CredentialEntry] {
        let now = Date(timeIntervalSince1970: Double(clock.now()) / 1000)
        guard query.label != nil || !query.attributes.isEmpty else {
            return try entries().filter { query.matches($0, now: now) }
        }
        let stored = try readFollowingRekey({ keys in try taggedEntries(query, keys: keys) }, isMiss: \.isEmpty)
        return try withSessionEntries(stored) { _ in true }.filter { query.matches($0, now: now) }
    }

    /// The stored entries of every space that holds a credential carrying the query's most
    /// selective tag (its label's, or one attribute's), in one snapshot, checked against the seal
    /// tree: the tag's leaf (no tag row missing, older or foreign) and each space's.
    ///
    /// Which tag is the most selective is read from the tag table unchecked: a count made wrong
    /// only picks another tag, whose rows are checked in full, and a credential that meets the
    /// query carries every one of its tags.
    private func taggedEntries(_ query: CredentialQuery, keys: StoreKeyring) throws -> [CredentialEntry] {
        var tags = query.label.map { [keys.tagIndex(label: $0)] } ?? []
        tags += query.attributes.sorted { $0.key < $1.key }.map { keys.tagIndex(attribute: $0.key, value: $0.value) }
        let (rows, choices) = try repository.snapshotRead { reader -> ([SealedCredential], [BlindIndex: SealedDefault]) in
            var chosen = tags[0]
            var fewest = Int.max
            for tag in tags {
                let count = try reader.tagCount(tag)
                if count < fewest { (chosen, fewest) = (tag, count) }
            }
            let tagged = try reader.credentialKeys(tagged: chosen)
            var spaces: [BlindIndex: SealedSpace] = [:]
            for key in tagged where spaces[key.space] == nil { spaces[key.space] = try reader.space(key.space) }
            try checkLeaves(
                [SealChecks.tagClaim(chosen, tagged, keys: keys)]
                    + spaces.map { SealChecks.spaceClaim($0.key, $0.value, keys: keys) },
                reader: reader, keys: keys)
            return (spaces.values.flatMap(\.credentials), spaces.compactMapValues(\.defaultChoice))
        }
        // Every row of those spaces: whether one is its space's default depends on the others.
        return try entries(rows, choices: choices, keys: keys)
    }
}
