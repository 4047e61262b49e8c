import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreTestSupport

/// A write replaces what it names and keeps the rest (docs/contract.md, "What a write keeps"):
/// changing a password never takes a credential out of the fleet or drops its details, and
/// leaving the synchronizable tier needs the same consent as a removal.
@Suite struct WriteKeepsUnnamedTests {
    let store: TemporaryStore
    let space = Fixture.space()

    init() throws {
        store = try TemporaryStore()
    }

    /// A synchronizable credential with every detail.
    private func detailed(_ password: String = "old") -> Credential {
        Credential(
            user: "u", password: password, persistence: .synchronizable, expires: Date(timeIntervalSince1970: 4_000_000_000),
            refreshToken: "rt", label: "L1", comment: "note", attributes: ["env": "prod", "team": "infra"])
    }

    @Test func aNewPasswordKeepsTheTierAndEveryDetail() throws {
        let storage = try store.open()
        try storage.set(detailed(), for: space)
        try storage.set(Credential(user: "u", password: "new"), for: space)
        var expected = detailed("new")
        expected.persistence = .synchronizable
        #expect(try storage.credentials(for: space)["u"] == expected)
        // Another process sees the same, and the credential is still in the fleet's export.
        #expect(try store.open().credentials(for: space)["u"] == expected)
        #expect(try storage.entries().first { $0.user == "u" }?.persistence == .synchronizable)
    }

    @Test func whatTheWriteNamesReplacesAndAttributesMergeByName() throws {
        let storage = try store.open()
        try storage.set(detailed(), for: space)
        try storage.set(Credential(user: "u", password: "new", label: "L2", attributes: ["env": "staging", "owner": "me"]), for: space)
        let stored = try #require(try storage.credentials(for: space)["u"])
        #expect(stored.label == "L2")
        #expect(stored.comment == "note")
        #expect(stored.refreshToken == "rt")
        #expect(stored.attributes == ["env": "staging", "team": "infra", "owner": "me"])
        #expect(stored.persistence == .synchronizable)
    }

    @Test(arguments: [Persistence.permanent, .forSession])
    func leavingTheSynchronizableTierNeedsConsent(to persistence: Persistence) throws {
        let storage = try store.open()
        try storage.set(detailed(), for: space)
        expectError(.synchronizableRemovalNeedsOption) {
            try storage.set(Credential(user: "u", password: "new", persistence: persistence), for: space)
        }
        expectError(.synchronizableRemovalNeedsOption) {
            try storage.setDefaultCredential(Credential(user: "u", password: "new", persistence: persistence), for: space)
        }
        expectError(.synchronizableRemovalNeedsOption) {
            try storage.update(user: "u", for: space) { $0.persistence = persistence }
        }
        #expect(try storage.credentials(for: space)["u"] == detailed(), "nothing changed")

        try storage.set(Credential(user: "u", password: "new", persistence: persistence), for: space, options: .removeSynchronizable)
        #expect(try storage.credentials(for: space)["u"]?.persistence == persistence)
    }

    @Test func updateChangesDetailsWithoutThePasswordAndClearsWhatItSetsToNil() throws {
        let storage = try store.open()
        try storage.set(detailed(), for: space)
        let updated = try storage.update(user: "u", for: space) { credential in
            credential.label = nil
            credential.expires = nil
            credential.attributes["team"] = nil
            credential.comment = "rotated"
        }
        let stored = try #require(try storage.credentials(for: space)["u"])
        #expect(stored == updated)
        #expect(stored.password == "old")
        #expect(stored.label == nil && stored.expires == nil && stored.comment == "rotated")
        #expect(stored.attributes == ["env": "prod"])
        #expect(stored.persistence == .synchronizable)
    }

    @Test func updateOfAMissingUserIsNotFoundAndStoresNothing() throws {
        let storage = try store.open()
        expectError(.notFound) {
            try storage.update(user: "nobody", for: space) { $0.label = "x" }
        }
        #expect(try storage.credentials(for: space).isEmpty)
    }

    @Test func updateCannotRenameTheUserOrBreakAFieldRule() throws {
        let storage = try store.open()
        try storage.set(detailed(), for: space)
        expectError(.invalidInput) {
            try storage.update(user: "u", for: space) { $0.user = "v" }
        }
        expectError(.invalidInput) {
            try storage.update(user: "u", for: space) { $0.label = "two\nlines" }
        }
        #expect(try storage.credentials(for: space) == ["u": detailed()])
    }

    @Test func aBatchImportKeepsTheTierAndDetailsOfWhatItReplaces() throws {
        let storage = try store.open()
        try storage.set(detailed(), for: space)
        let outcomes = try storage.setAll([(space, Credential(user: "u", password: "imported"))], replacingDifferent: true, dryRun: false)
        #expect(outcomes == [.updated])
        #expect(try storage.credentials(for: space)["u"] == {
            var expected = detailed("imported")
            expected.persistence = .synchronizable
            return expected
        }())
    }

    @Test func aReplacedTLSIdentityOrTrustKeepsItsTier() throws {
        let storage = try store.open()
        let endpoint = TLSEndpoint(host: "git.example.com", port: 443)
        var trust = ServerTrust(pins: [try #require(PublicKeyPin(digest: [UInt8](repeating: 1, count: 32)))])
        try storage.tls.setServerTrust(trust, for: endpoint, persistence: .synchronizable)
        trust.pins.insert(try #require(PublicKeyPin(digest: [UInt8](repeating: 2, count: 32))))
        try storage.tls.setServerTrust(trust, for: endpoint)
        #expect(try storage.tls.serverTrusts()[endpoint]?.persistence == .synchronizable)
        expectError(.synchronizableRemovalNeedsOption) {
            try storage.tls.setServerTrust(trust, for: endpoint, persistence: .permanent)
        }
    }

    @Test func aNewPasswordDoesNotKeepAnExpiryThatHasPassed() throws {
        let storage = try store.open()
        try storage.set(Credential(user: "u", password: "old", expires: Date(timeIntervalSince1970: 1_000_000_000), label: "L1"), for: space)
        try storage.set(Credential(user: "u", password: "new"), for: space)
        let stored = try #require(try storage.credentials(for: space)["u"])
        #expect(stored.expires == nil, "the new password would be expired the moment it was stored")
        #expect(stored.label == "L1")
        #expect(try storage.defaultCredential(for: space)?.password == "new")
    }

    @Test func anUnnamedTierIsEqualToPermanentForANewCredential() throws {
        #expect(Credential(user: "u", password: "p") == Credential(user: "u", password: "p", persistence: .permanent))
        #expect(Set([Credential(user: "u", password: "p"), Credential(user: "u", password: "p", persistence: .permanent)]).count == 1)
        let storage = try store.open()
        try storage.set(Credential(user: "u", password: "p"), for: space)
        #expect(try storage.credentials(for: space)["u"]?.persistence == .permanent)
    }
}
