import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// Removal by user across tiers, and the synchronizable guard.
@Suite struct RemovalTests {
    let store: TemporaryStore
    let space = Fixture.space()

    init() throws {
        store = try TemporaryStore()
    }

    @Test(arguments: [Persistence.forSession, .permanent])
    func removeByUserRemovesTheCredentialInEitherTier(persistence: Persistence) throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "real", persistence), for: space)
        #expect(try storage.remove(user: "alice", for: space))
        #expect(try storage.credentials(for: space).isEmpty)
        #expect(try store.open().credentials(for: space).isEmpty)
    }

    @Test func removingAnUnknownUserReportsNothingRemoved() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice"), for: space)
        #expect(try storage.remove(user: "mallory", for: space) == false)
        #expect(try storage.credentials(for: space).keys.sorted() == ["alice"])
    }

    @Test func aSynchronizableCredentialNeedsTheOption() throws {
        let storage = try store.open()
        let synced = Fixture.credential("alice", "pw", .synchronizable)
        try storage.set(synced, for: space)
        expectError(.synchronizableRemovalNeedsOption) { try storage.remove(user: synced.user, for: space) }
        #expect(try storage.credentials(for: space) == ["alice": synced], "nothing changed")
        #expect(try storage.defaultCredential(for: space) == synced, "not even the default")
        #expect(try storage.remove(user: synced.user, for: space, options: .removeSynchronizable))
        #expect(try storage.credentials(for: space).isEmpty)
    }

    @Test func removeLeavesOtherUsersAndSpacesAlone() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice"), for: space)
        try storage.set(Fixture.credential("bob"), for: space)
        try storage.set(Fixture.credential("alice"), for: Fixture.space("other.example.com"))
        try storage.remove(user: "alice", for: space)
        #expect(try storage.credentials(for: space).keys.sorted() == ["bob"])
        #expect(try storage.credentials(for: Fixture.space("other.example.com")).keys.sorted() == ["alice"])
    }
}
