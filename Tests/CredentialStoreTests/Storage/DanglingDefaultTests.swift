import Foundation
import GRDB
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// A default choice that names no credential is the trace of a row deleted outside credstore, and
/// every lookup refuses it, even when a single row is left to answer.
@Suite struct DanglingDefaultTests {
    let store: TemporaryStore
    let space = Fixture.space(realm: "Staff")

    init() throws {
        store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "pw-alice"), for: space)
        try storage.set(Fixture.credential("bob", "pw-bob"), for: space)
    }

    /// Deletes alice's row (the default's) as `sqlite3` would, without the key.
    func deleteTheDefaultsRow(using storage: CredentialStorage) throws {
        let spaceIndex = storage.keys.spaceIndex(space)
        let userIndex = storage.keys.userIndex(spaceIndex: spaceIndex, user: "alice")
        try store.rawDatabase().write {
            try $0.execute(sql: "DELETE FROM credentials WHERE space_index = ? AND user_index = ?",
                           arguments: [Data(spaceIndex), Data(userIndex)])
        }
    }

    /// Every lookup a client can make of the space.
    func expectEveryLookupRefuses(_ storage: CredentialStorage) {
        let url = URL(string: "https://api.example.com/")!
        expectError(.tamperDetected) { try storage.defaultCredential(for: space) }
        expectError(.tamperDetected) { try storage.defaultCredential(answering: .request(url, realm: "Staff"))?.credential }
        expectError(.tamperDetected) { try storage.defaultCredential(answering: .request(url))?.credential }
        expectError(.tamperDetected) { try storage.credentials(for: space) }
        expectError(.tamperDetected) { try storage.entries() }
    }

    @Test func aStoreOpenedForOneLookupRefusesIt() throws {
        let first = try store.open()
        try deleteTheDefaultsRow(using: first)
        expectEveryLookupRefuses(try store.open(integrityCheck: .onOpen))
        expectEveryLookupRefuses(try store.open())
        #expect(!(try store.open(integrityCheck: .deferredToVerify).maintenance.verify().isSound))
    }

    /// A challenge for Basic or Digest in the realm falls back to the realm's space without a
    /// method: its tampering is reported there, never skipped for the origin's credential without
    /// a realm.
    @Test func aChallengeFallingBackToATamperedSpaceRefuses() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("origin-wide", "pw-origin"), for: Fixture.space())
        try deleteTheDefaultsRow(using: storage)
        for method in [AuthenticationMethod.httpBasic, .httpDigest] {
            expectError(.tamperDetected) { try storage.defaultCredential(answering: .challenge(Fixture.space(realm: "Staff", method: method)))?.credential }
            expectError(.tamperDetected) { try store.open(integrityCheck: .onOpen).defaultCredential(answering: .challenge(Fixture.space(realm: "Staff", method: method)))?.credential }
        }
    }

    @Test func aStoreOpenBeforeTheDeletionRefusesIt() throws {
        let storage = try store.open()
        #expect(try storage.defaultCredential(for: space)?.user == "alice")
        try deleteTheDefaultsRow(using: storage)
        expectEveryLookupRefuses(storage)
    }

    @Test func aDefaultLeftInASpaceWithNoRowsIsRefusedByTheExactLookup() throws {
        let storage = try store.open()
        try deleteTheDefaultsRow(using: storage)
        let spaceIndex = storage.keys.spaceIndex(space)
        try store.rawDatabase().write { try $0.execute(sql: "DELETE FROM credentials WHERE space_index = ?", arguments: [Data(spaceIndex)]) }
        expectError(.tamperDetected) { try storage.defaultCredential(for: space) }
        expectError(.tamperDetected) { try storage.credentials(for: space) }
        expectError(.tamperDetected) { try storage.entries() }
    }

    /// A write to the space does not paper over the deletion: before, `set` of a new user made
    /// bob the space's default by quietly replacing the dangling choice, and `remove` cleared it.
    @Test func aWriteToTheSpaceRefusesInsteadOfRepairingIt() throws {
        let storage = try store.open(integrityCheck: .onOpen)
        try deleteTheDefaultsRow(using: storage)
        expectError(.tamperDetected) { try storage.set(Fixture.credential("carol", "pw-carol"), for: space) }
        expectError(.tamperDetected) { try storage.set(Fixture.credential("bob", "new-pw"), for: space) }
        expectError(.tamperDetected) { try storage.remove(user: "bob", for: space) }
        expectError(.tamperDetected) { try storage.setDefaultCredential(Fixture.credential("bob", "pw-bob"), for: space) }
        // Other spaces are still writable.
        try storage.set(Fixture.credential("dave"), for: Fixture.space("other.example.com"))
    }

    /// Another process's writes between a lookup's two statements never look like tampering.
    @Test func concurrentWritesAreNotTampering() async throws {
        let reader = try store.open(integrityCheck: .onOpen)
        let writer = try store.open()
        let space = space
        async let writes: Void = {
            for round in 0..<150 {
                let user = "user\(round)"
                try writer.set(Fixture.credential(user), for: space)
                try writer.setDefaultCredential(Fixture.credential(user), for: space)
                try writer.remove(user: user, for: space)
            }
        }()
        for _ in 0..<600 {
            _ = try reader.defaultCredential(for: space)
            _ = try reader.credentials(for: space)
        }
        try await writes
    }
}
