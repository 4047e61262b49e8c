import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// The persistence tiers of docs/contract.md ("The store"): what each keeps, for how long, and how a user moves between them.
@Suite struct TierTests {
    let store: TemporaryStore
    let space = Fixture.space()

    init() throws {
        store = try TemporaryStore()
    }

    @Test func aNoneCredentialIsNotStored() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "pw", .none), for: space)
        #expect(try storage.credentials(for: space).isEmpty)
        #expect(try storage.defaultCredential(for: space) == nil)
    }

    @Test func aSessionCredentialLivesOnlyInItsInstance() throws {
        let storage = try store.open()
        let alice = Fixture.credential("alice", "session-pw", .forSession)
        try storage.set(alice, for: space)
        #expect(try storage.credentials(for: space) == ["alice": alice])
        #expect(try storage.defaultCredential(for: space) == alice)
        // Another instance on the same file, and the next "run", never see it.
        #expect(try store.open().credentials(for: space).isEmpty)
    }

    @Test func aSessionCredentialIsNeverWrittenToDisk() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("session-user-canary", "session-secret-canary", .forSession), for: space)
        for (url, bytes) in try store.files() {
            #expect(bytes.range(of: Data("session-user-canary".utf8)) == nil, "found in \(url.lastPathComponent)")
        }
        #expect(try storage.repository.read { try $0.allCredentials() }.isEmpty)
    }

    @Test(arguments: [Persistence.permanent, .synchronizable])
    func aDiskCredentialSurvivesReopening(persistence: Persistence) throws {
        let alice = Fixture.credential("alice", "disk-pw", persistence)
        try store.open().set(alice, for: space)
        let reopened = try store.open()
        #expect(try reopened.credentials(for: space) == ["alice": alice])
        #expect(try reopened.allCredentials() == [space: ["alice": alice]])
    }

    @Test func oneCredentialPerUserPerSpaceTheLastSetWins() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "old"), for: space)
        try storage.set(Fixture.credential("alice", "new"), for: space)
        #expect(try storage.credentials(for: space) == ["alice": Fixture.credential("alice", "new")])
    }

    @Test func settingAUserInAnotherTierMovesIt() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "pw", .permanent), for: space)
        try storage.set(Fixture.credential("alice", "pw", .forSession), for: space)
        #expect(try storage.credentials(for: space)["alice"]?.persistence == .forSession)
        #expect(try store.open().credentials(for: space).isEmpty, "the disk copy is gone")

        try storage.set(Fixture.credential("alice", "pw", .synchronizable), for: space)
        #expect(try storage.credentials(for: space) == ["alice": Fixture.credential("alice", "pw", .synchronizable)])
        #expect(try store.open().credentials(for: space)["alice"]?.persistence == .synchronizable)
    }

    @Test func spacesAreComparedByValueNotIdentity() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice"), for: ProtectionSpace(host: "API.Example.com.", port: 0, protocol: "HTTPS", realm: nil))
        let rebuilt = ProtectionSpace(host: "api.example.com", port: 443, protocol: "NSURLProtectionSpaceHTTPS", realm: nil)
        #expect(try storage.credentials(for: rebuilt).keys.sorted() == ["alice"])
    }

    @Test func differentRealmsMethodsAndProxiesAreDifferentSpaces() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "a"), for: Fixture.space(realm: "A"))
        try storage.set(Fixture.credential("alice", "b"), for: Fixture.space(realm: "a"))
        try storage.set(Fixture.credential("alice", "c"), for: Fixture.space(realm: "A", method: .httpDigest))
        try storage.set(Fixture.credential("alice", "d"), for: ProtectionSpace(proxy: ProxyEndpoint(host: "api.example.com", port: 443, type: .https), realm: "A"))
        let passwords = try storage.allCredentials().values.compactMap { $0["alice"]?.password }.sorted()
        #expect(passwords == ["a", "b", "c", "d"])
        #expect(try storage.defaultCredential(for: Fixture.space(realm: "a"))?.password == "b")
    }

    @Test func anInvalidSpaceIsRefusedWithItsCode() throws {
        let storage = try store.open()
        let badSpaces = [
            ProtectionSpace(host: "", port: 443, protocol: "https", realm: nil),
            ProtectionSpace(host: "a b", port: 443, protocol: "https", realm: nil),
            ProtectionSpace(host: "example.com", port: 70000, protocol: "https", realm: nil),
        ]
        for bad in badSpaces {
            expectError(.invalidProtectionSpace) { try storage.set(Fixture.credential("alice"), for: bad) }
        }
        #expect(try storage.allCredentials().isEmpty)
    }

    @Test func unicodeSpellingsSwiftCallsEqualAreOneUser() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("jos\u{E9}", "first"), for: space)
        try storage.set(Fixture.credential("jose\u{301}", "second"), for: space)
        let stored = try storage.credentials(for: space)
        #expect(stored.count == 1)
        #expect(stored.values.first?.password == "second")
    }
}
