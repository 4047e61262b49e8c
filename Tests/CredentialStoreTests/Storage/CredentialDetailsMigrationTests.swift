import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreTestSupport

/// A store written before credentials had details (Tests/Fixtures/store-before-details, made by
/// the credstore of d83336d with its git helper) opens with every credential and field intact,
/// and without the hidden `git-credential-meta+` companions the old git helper kept.
@Suite struct CredentialDetailsMigrationTests {
    static let fixture = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/store-before-details")

    /// A copy of the fixture in a fresh temporary store folder.
    static func copyOfTheOldStore() throws -> TemporaryStore {
        let store = try TemporaryStore()
        try FileManager.default.createDirectory(at: store.directory, withIntermediateDirectories: true)
        for name in ["credentials.db", "store.key"] {
            let copy = store.directory.appendingPathComponent(name)
            try FileManager.default.copyItem(at: fixture.appendingPathComponent(name), to: copy)
            // A clone checks the files out 0644; a store refuses files others can read.
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: copy.path)
        }
        return store
    }

    static func space(_ host: String, port: Int = 443, realm: String? = nil) -> ProtectionSpace {
        ProtectionSpace(host: host, port: port, protocol: "https", realm: realm)
    }

    @Test("Every credential of the old store opens with its git fields folded in, and no companion is left")
    func theOldStoreOpensWithItsFieldsAndWithoutCompanions() throws {
        let store = try Self.copyOfTheOldStore()
        let storage = try store.open()
        let entries = try storage.entries()
        #expect(!entries.contains { $0.space.protocol?.hasPrefix("git-credential-meta+") == true })
        #expect(Set(entries.map(\.user)) == ["alice", "bob", "carol", "dave"])

        let alice = try #require(try storage.credentials(for: Self.space("git.example.com"))["alice"])
        #expect(alice.password == "gho_alice_token")
        #expect(alice.expires == Date(timeIntervalSince1970: 2_000_000_000))
        #expect(alice.refreshToken == "rt/alice+=&%x")
        #expect(try storage.defaultCredential(for: Self.space("git.example.com"))?.user == "alice")

        let bob = try #require(try storage.credentials(for: Self.space("git.example.com", port: 8443, realm: "git:org/repo.git"))["bob"])
        #expect(bob.password == "gho_bob_token")
        #expect(bob.expires == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(bob.refreshToken == "rt-bob")

        let carol = try #require(try storage.credentials(for: Self.space("other.example.org"))["carol"])
        #expect(carol == Credential(user: "carol", password: "carol-pw"))

        let dave = try #require(try storage.credentials(for: Self.space("sync.example.com"))["dave"])
        #expect(dave.persistence == .synchronizable)
        #expect(dave.expires == Date(timeIntervalSince1970: 2_100_000_000))
        #expect(dave.refreshToken == nil)

        // The orphaned companion is gone with the others; nothing else is left behind.
        #expect(try storage.credentials(for: Self.space("orphan.example.com")).isEmpty)
        let report = try storage.maintenance.verify()
        #expect(report.credentialsChecked == 4)
    }

    @Test("The migration happens once: a second open changes nothing and the store stays consistent")
    func theFoldIsDoneOnce() throws {
        let store = try Self.copyOfTheOldStore()
        let first = try store.open().entries()
        store.waitUntilClosed()
        let storage = try store.open()
        #expect(try storage.entries() == first)
        _ = try storage.maintenance.verify()
    }

    @Test("A companion's values in the first versions' form (one line each) decode too")
    func legacyLineFormDecodes() {
        let values = GitCompanionFold.decode("password_expiry_utc=1700000000\noauth_refresh_token=a&b=c%20")
        #expect(values.expiry == 1_700_000_000)
        #expect(values.refreshToken == "a&b=c%20")
        let current = GitCompanionFold.decode("password_expiry_utc=5&oauth_refresh_token=a%26b%3Dc")
        #expect(current.expiry == 5 && current.refreshToken == "a&b=c")
    }
}
