import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// The default rules of docs/contract.md ("The store"), and best match for a URL.
@Suite struct DefaultCredentialTests {
    let store: TemporaryStore
    let space = Fixture.space()

    init() throws {
        store = try TemporaryStore()
    }

    @Test func theFirstCredentialSetInASpaceBecomesTheDefault() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "a"), for: space)
        try storage.set(Fixture.credential("bob", "b"), for: space)
        #expect(try storage.defaultCredential(for: space)?.user == "alice")
        #expect(try store.open().defaultCredential(for: space)?.user == "alice", "the choice persists")
    }

    @Test func anExplicitDefaultWins() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice"), for: space)
        try storage.set(Fixture.credential("bob", "b"), for: space)
        try storage.setDefaultCredential(Fixture.credential("bob", "b"), for: space)
        #expect(try storage.defaultCredential(for: space) == Fixture.credential("bob", "b"))
        #expect(try store.open().defaultCredential(for: space)?.user == "bob")
    }

    @Test func setDefaultAddsTheCredentialIfAbsent() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice"), for: space)
        try storage.setDefaultCredential(Fixture.credential("carol", "c"), for: space)
        #expect(try storage.credentials(for: space)["carol"] == Fixture.credential("carol", "c"))
        #expect(try storage.defaultCredential(for: space)?.user == "carol")
    }

    @Test func aPasswordUpdateKeepsTheDefault() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "old"), for: space)
        try storage.set(Fixture.credential("bob"), for: space)
        try storage.set(Fixture.credential("alice", "new"), for: space)
        #expect(try storage.defaultCredential(for: space) == Fixture.credential("alice", "new"))
    }

    @Test func aTierMoveKeepsTheDefault() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice"), for: space)
        try storage.set(Fixture.credential("bob"), for: space)
        try storage.set(Fixture.credential("alice", "pw", .forSession), for: space)
        #expect(try storage.defaultCredential(for: space)?.persistence == .forSession)
        try storage.set(Fixture.credential("alice", "pw", .synchronizable), for: space)
        #expect(try storage.defaultCredential(for: space) == Fixture.credential("alice", "pw", .synchronizable))
        #expect(try store.open().defaultCredential(for: space)?.user == "alice")
    }

    @Test func removingTheDefaultWithSeveralLeftLeavesNone() throws {
        let storage = try store.open()
        for user in ["alice", "bob", "carol"] { try storage.set(Fixture.credential(user), for: space) }
        try storage.remove(user: "alice", for: space)
        #expect(try storage.defaultCredential(for: space) == nil)
        #expect(try store.open().defaultCredential(for: space) == nil)
    }

    @Test func theSoleRemainingCredentialIsTheDefault() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice"), for: space)
        try storage.set(Fixture.credential("bob", "b"), for: space)
        try storage.remove(user: "alice", for: space)
        #expect(try storage.defaultCredential(for: space) == Fixture.credential("bob", "b"))
    }

    @Test func aSpaceWithoutCredentialsHasNoDefault() throws {
        #expect(try store.open().defaultCredential(for: space) == nil)
    }

    @Test func aSessionDefaultAndADiskDefaultDoNotConflict() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "s", .forSession), for: space)
        try storage.set(Fixture.credential("bob", "b"), for: space)
        #expect(try storage.defaultCredential(for: space)?.user == "alice")
        // Another instance never saw alice: bob is its only credential, so its default.
        #expect(try store.open().defaultCredential(for: space)?.user == "bob")
    }

    // MARK: Best match for a URL

    @Test func bestMatchPrefersTheExactSpace() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("exact", "e"), for: space)
        try storage.set(Fixture.credential("realm", "r"), for: Fixture.space(realm: "R"))
        let url = URL(string: "https://api.example.com/v1/items")!
        #expect(try storage.defaultCredential(answering: .request(url))?.credential.user == "exact")
        #expect(try storage.defaultCredential(answering: .request(url, realm: "R"))?.credential.user == "realm")
    }

    @Test func bestMatchWithoutARealmFindsTheSingleSpaceWithADefault() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "a"), for: Fixture.space(realm: "Staff"))
        try storage.set(Fixture.credential("other", "o"), for: Fixture.space("other.example.com", realm: "Staff"))
        #expect(try storage.defaultCredential(answering: .request(URL(string: "https://api.example.com/")!))?.credential.user == "alice")
        #expect(try storage.defaultCredential(answering: .request(URL(string: "http://api.example.com/")!))?.credential == nil, "another protocol")
        #expect(try storage.defaultCredential(answering: .request(URL(string: "https://api.example.com:8443/")!))?.credential == nil, "another port")
    }

    @Test func bestMatchRefusesToGuessBetweenRealms() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "a"), for: Fixture.space(realm: "Staff"))
        try storage.set(Fixture.credential("bob", "b"), for: Fixture.space(realm: "Admins"))
        let error = #expect(throws: CredentialStorageError.self) {
            try storage.defaultCredential(answering: .request(URL(string: "https://api.example.com/")!))?.credential
        }
        #expect(error?.code == .ambiguousMatch)
        #expect(error?.message.contains("Staff") == true && error?.message.contains("Admins") == true)
        #expect(try storage.defaultCredential(answering: .request(URL(string: "https://api.example.com/")!, realm: "Admins"))?.credential.user == "bob")
    }

    @Test func bestMatchSeesSessionCredentials() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "a", .forSession), for: Fixture.space(realm: "Staff"))
        #expect(try storage.defaultCredential(answering: .request(URL(string: "https://api.example.com/x")!))?.credential.user == "alice")
    }
}
