import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import Foundation

extension CredentialStorage {
    /// The credentials of the store and of this instance's session that `query` selects (every
    /// one by default), without passwords or refresh tokens, sorted by host, port, realm and user.
    ///
    /// A query with a label or attributes is served from their blind indexes: the credentials
    /// that carry its most selective tag, proven against the seal (none missing, none added), and
    /// every condition checked again on each of them once opened. A query without either (host
    /// pattern, tier, expiry, which no index serves) reads every entry, checking every row against
    /// the seal. This instance's session credentials are searched in memory (docs/performance.md,
    /// "Search").
    public func entries(matching query: CredentialQuery = .all) throws -> [CredentialEntry] {
        guard query != .all else { return try allEntries() }
        let now = Date(timeIntervalSince1970: Double(clock.now()) / 1000)
        guard query.label != nil || !query.attributes.isEmpty else {
            return try allEntries().filter { query.matches($0, now: now) }
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
