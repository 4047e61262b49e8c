import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreTestSupport

/// Expiry is a property: an expired credential is nobody's default or best match, but an explicit
/// lookup by user still finds it, and git's helper can still ask for it.
@Suite struct ExpiryTests {
    static let space = ProtectionSpace(host: "git.example.com", port: 443, protocol: "https", realm: "r", authenticationMethod: .httpBasic)
    static let url = URL(string: "https://git.example.com/repo")!

    /// A store whose clock stands at a whole second, with alice expiring one day on.
    func storeWithExpiringAlice() throws -> (TemporaryStore, CredentialStorage, TestClock) {
        let store = try TemporaryStore()
        let clock = TestClock(startingAt: 1_800_000_000_000)
        let storage = try store.open(clock: clock)
        let expires = Date(timeIntervalSince1970: 1_800_000_000 + 86_400)
        try storage.set(Credential(user: "alice", password: "tok", persistence: .permanent, expires: expires, label: "work"), for: Self.space)
        return (store, storage, clock)
    }

    @Test("Before expiry the credential is the default everywhere; after it, nowhere")
    func expiredIsNoDefault() throws {
        let (_, storage, clock) = try storeWithExpiringAlice()
        let answering = Self.space.replacing(realm: "r", authenticationMethod: .default)
        #expect(try storage.defaultCredential(for: Self.space)?.user == "alice")
        #expect(try storage.defaultCredential(answering: .challenge(answering))?.credential.user == "alice")
        #expect(try storage.defaultCredential(answering: .request(Self.url))?.credential.user == "alice")
        #expect(try storage.defaultCredentialAndSpace(for: Self.space)?.credential.user == "alice")

        clock.advance(by: TestClock.day)
        #expect(try storage.defaultCredential(for: Self.space) == nil)
        #expect(try storage.defaultCredential(answering: .challenge(answering))?.credential == nil)
        #expect(try storage.defaultCredential(answering: .request(Self.url))?.credential == nil)
        #expect(try storage.defaultCredentialAndSpace(for: Self.space) == nil)
        // Git's helper answers an expired login with its refresh token: it still sees it.
        #expect(try storage.defaultCredentialAndSpace(for: Self.space, includingExpired: true)?.credential.user == "alice")
        // An explicit lookup by user finds it, marked expired.
        let explicit = try #require(try storage.credentials(for: Self.space)["alice"])
        #expect(explicit.isExpired(at: Date(timeIntervalSince1970: 1_800_000_000 + 86_400)))
    }

    @Test("An expired default gives way to a live credential of a compatible space")
    func liveCompatibleAnswers() throws {
        let (_, storage, clock) = try storeWithExpiringAlice()
        let methodless = Self.space.replacing(realm: "r", authenticationMethod: .default)
        try storage.set(Credential(user: "bob", password: "pw", persistence: .permanent), for: methodless)
        clock.advance(by: 2 * TestClock.day)
        #expect(try storage.defaultCredential(for: Self.space)?.user == "bob")
    }

    @Test("A listing shows expiry and label, and an expired default as no default")
    func entriesCarryExpiryAndLabel() throws {
        let (_, storage, clock) = try storeWithExpiringAlice()
        #expect(try storage.entries().first?.isDefault == true)
        clock.advance(by: 2 * TestClock.day)
        let entry = try #require(try storage.entries().first)
        #expect(entry.expires == Date(timeIntervalSince1970: 1_800_000_000 + 86_400))
        #expect(entry.label == "work")
        #expect(!entry.isDefault, "defaultCredential(for:) no longer returns it")
        #expect(try storage.defaultCredential(for: Self.space) == nil)
    }

    @Test("Every listing marks as default what defaultCredential(for:) returns, by the store's clock")
    func everyListingAgreesWithTheDefaultLookup() throws {
        let (_, storage, clock) = try storeWithExpiringAlice()
        // A space of the same origin whose live default stays one, and a session credential that
        // expires with alice: the session tier's default is settled by the same rule.
        let other = Self.space.replacing(realm: "other", authenticationMethod: .httpBasic)
        try storage.set(Credential(user: "bob", password: "pw", persistence: .permanent, label: "work"), for: other)
        let session = Self.space.replacing(realm: "session", authenticationMethod: .httpBasic)
        try storage.set(Credential(user: "carol", password: "pw", persistence: .forSession,
                                   expires: Date(timeIntervalSince1970: 1_800_000_000 + 86_400), label: "work"), for: session)
        clock.advance(by: 2 * TestClock.day)

        let listings = [
            try storage.entries(),
            try storage.entries(onOriginOf: Self.space),
            try storage.entries(matching: CredentialQuery(label: "work")),
            try storage.entries(matching: CredentialQuery(host: "git.example.com")),
        ]
        for entries in listings {
            #expect(entries.count == 3)
            for entry in entries {
                #expect(entry.isDefault == (try storage.defaultCredential(for: entry.space)?.user == entry.user), "\(entry.user)")
                // The default rule still names the expired ones: what says a default has expired.
                #expect(entry.isDefaultEvenIfExpired)
            }
            #expect(entries.filter(\.isDefault).map(\.user) == ["bob"])
        }
    }

    @Test("An entry as encoded before expiry and label existed still decodes")
    func oldEntryJSONDecodes() throws {
        let old = CredentialEntry(space: Self.space, user: "u", persistence: .permanent, isDefault: true, created: nil, modified: nil)
        var json = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(old)) as? [String: Any])
        json["expires"] = nil
        json["label"] = nil
        let decoded = try JSONDecoder().decode(CredentialEntry.self, from: JSONSerialization.data(withJSONObject: json))
        #expect(decoded == old)
    }
}
