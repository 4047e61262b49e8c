import Foundation
import GRDB
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// Listing, verification, passphrase change and root-key rotation.
@Suite(.cheapKeyDerivation) struct AdministrationTests {
    let store: TemporaryStore
    let space = Fixture.space(realm: "R")

    init() throws {
        store = try TemporaryStore()
    }

    @Test func entriesListEveryCredentialWithItsDefaultAndNoPassword() throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "a"), for: space)
        try storage.set(Fixture.credential("bob", "b", .synchronizable), for: space)
        try storage.set(Fixture.credential("carol", "c", .forSession), for: Fixture.space("other.example.com"))
        let entries = try storage.entries()
        #expect(entries.map(\.user) == ["alice", "bob", "carol"])
        #expect(entries.map(\.isDefault) == [true, false, true])
        #expect(entries.map(\.persistence) == [.permanent, .synchronizable, .forSession])
        #expect(entries[0].created != nil && entries[2].created == nil)
        let json = String(decoding: try JSONEncoder().encode(entries), as: UTF8.self)
        #expect(!json.contains("\"a\"") && !json.contains("password"))
    }

    @Test func verifyPassesOnASoundStoreAndNamesEachFault() throws {
        do {
            let storage = try store.open()
            for user in ["alice", "bob", "carol"] { try storage.set(Fixture.credential(user, "pw-\(user)"), for: space) }
            let report = try storage.maintenance.verify()
            #expect(report.isSound)
            #expect(report.credentialsChecked == 3 && report.defaultsChecked == 1)
        }
        try store.rawDatabase().write { db in
            try db.execute(sql: "UPDATE credentials SET modified = modified + 1 WHERE user_index = (SELECT user_index FROM credentials LIMIT 1)")
        }
        let report = try store.open().maintenance.verify()
        #expect(!report.isSound)
        #expect(report.credentialsChecked == 2)
        #expect(report.problems.count == 1)
        #expect(!report.problems.joined().contains("pw-"))
    }

    @Test func changingThePassphraseKeepsEveryCredential() throws {
        do {
            let storage = try CredentialStorage(at: store.databaseURL, key: .passphrase("first passphrase"))
            try storage.set(Fixture.credential("alice", "a"), for: space)
            #expect(storage.maintenance.isPassphraseProtected)
            try storage.maintenance.changePassphrase(to: "second passphrase")
            #expect(try storage.defaultCredential(for: space)?.password == "a")
        }
        #expect(try StoreFile.protection(ofStoreAt: store.databaseURL) == .passphrase)
        expectError(.wrongKey) { try CredentialStorage(at: store.databaseURL, key: .passphrase("first passphrase")) }
        let reopened = try CredentialStorage(at: store.databaseURL, key: .passphrase("second passphrase"))
        #expect(try reopened.defaultCredential(for: space)?.password == "a")
    }

    @Test func theOldPassphrasesSlotIsInNoFileOnceChanged() throws {
        let storage = try CredentialStorage(at: store.databaseURL, key: .passphrase("first passphrase"))
        try storage.set(Fixture.credential("alice", "a"), for: space)
        // The old slot wraps the same root key: whoever knows the old passphrase must not find it.
        let oldSlot = try #require(try storage.repository.read { try $0.header() }?.1.first?.wrappedRootKey)
        #expect(try store.files().values.contains { $0.range(of: Data(oldSlot)) != nil })

        try storage.maintenance.changePassphrase(to: "second passphrase")
        let holding = try store.files().filter { $0.value.range(of: Data(oldSlot)) != nil }.map(\.key.lastPathComponent)
        #expect(holding.isEmpty, "the old slot is still in \(holding)")
    }

    @Test func aKeyFileStoreHasNoPassphraseToChange() throws {
        let storage = try store.open()
        #expect(try StoreFile.protection(ofStoreAt: store.databaseURL) == .keyFile)
        expectError(.wrongKey) { try storage.maintenance.changePassphrase(to: "anything") }
    }

    @Test func rekeyReSealsEveryRowUnderANewRootKey() throws {
        let storage = try store.open()
        for user in ["alice", "bob"] { try storage.set(Fixture.credential(user, "pw-\(user)"), for: space) }
        try storage.setDefaultCredential(Fixture.credential("bob", "pw-bob"), for: space)
        let before = try store.rawDatabase().read { try Data.fetchAll($0, sql: "SELECT sealed_credential FROM credentials") }
        try storage.maintenance.rekey()
        let after = try store.rawDatabase().read { try Data.fetchAll($0, sql: "SELECT sealed_credential FROM credentials") }
        #expect(Set(before).isDisjoint(with: Set(after)))
        #expect(try storage.defaultCredential(for: space) == Fixture.credential("bob", "pw-bob"))
        #expect(try storage.maintenance.verify().isSound)
        let reopened = try store.open()
        #expect(try reopened.credentials(for: space).mapValues(\.password) == ["alice": "pw-alice", "bob": "pw-bob"])
        #expect(try reopened.defaultCredential(for: space)?.user == "bob")
    }

    @Test func anotherInstanceFollowsARekeyInsteadOfMissingOrCryingTamper() throws {
        let writer = try store.open()
        let other = try store.open()
        try writer.set(Fixture.credential("alice", "a"), for: space)
        #expect(try other.defaultCredential(for: space)?.password == "a")
        try writer.maintenance.rekey()
        // Its keys are stale now: the read must notice the new generation, not report a miss.
        #expect(try other.defaultCredential(for: space)?.password == "a")
        #expect(try other.allCredentials()[space]?["alice"]?.password == "a")
        try writer.maintenance.rekey()
        // And a write from the stale instance must seal under the new keys.
        try other.set(Fixture.credential("bob", "b"), for: space)
        #expect(try writer.credentials(for: space).mapValues(\.password) == ["alice": "a", "bob": "b"])
        #expect(try writer.maintenance.verify().isSound)
    }
}
