import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreTestSupport

/// Expiry, refresh token, label, comment and attributes: kept as written, never shown when secret.
@Suite struct CredentialDetailsTests {
    static let refreshToken = "rt-9f8e7d6c5b4a-REFRESH"
    static let detailed = Credential(
        user: "alice", password: "s3cret-access-token", persistence: .permanent,
        expires: Date(timeIntervalSince1970: 1_798_675_200.75), refreshToken: refreshToken, label: "work GitHub",
        comment: "rotated by the SSO\nevery 30 days", attributes: ["team": "infra", "env": "prod"])
    static let space = ProtectionSpace(host: "git.example.com", port: 443, protocol: "https", realm: "r", authenticationMethod: .httpBasic)

    @Test("The refresh token is hidden wherever the password is, in every rendering", arguments: CredentialTests.Rendering.allCases)
    func renderingHidesRefreshToken(rendering: CredentialTests.Rendering) {
        let text = rendering.render(Self.detailed)
        #expect(!text.contains(Self.refreshToken))
        #expect(!text.contains(Self.detailed.password))
        #expect(text.contains("alice"))
    }

    @Test("Expiry is kept to the second, so a credential reads back equal to what was written")
    func expiryIsWholeSeconds() {
        #expect(Self.detailed.expires == Date(timeIntervalSince1970: 1_798_675_200))
        #expect(Self.detailed.isExpired(at: Date(timeIntervalSince1970: 1_798_675_200)))
        #expect(!Self.detailed.isExpired(at: Date(timeIntervalSince1970: 1_798_675_199.9)))
        #expect(!Credential(user: "u", password: "p").isExpired())
    }

    @Test("Every field survives the store: set, close, reopen, read")
    func roundTripThroughAReopenedStore() throws {
        let store = try TemporaryStore()
        try store.open().set(Self.detailed, for: Self.space)
        store.waitUntilClosed()
        let read = try store.open().credentials(for: Self.space)["alice"]
        #expect(read == Self.detailed)
        #expect(read?.attributes == ["team": "infra", "env": "prod"])
        #expect(read?.comment == "rotated by the SSO\nevery 30 days")
    }

    @Test("A credential without details reads back without any, and an update that clears them drops the old details")
    func plainCredentialsStayPlain() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(Credential(user: "bob", password: "plain"), for: Self.space)
        #expect(try storage.credentials(for: Self.space)["bob"] == Credential(user: "bob", password: "plain"))
        try storage.set(Self.detailed, for: Self.space)
        try storage.update(user: "alice", for: Self.space) { credential in
            credential = Credential(user: "alice", password: "new", persistence: credential.persistence)
        }
        let read = try #require(try storage.credentials(for: Self.space)["alice"])
        #expect(read == Credential(user: "alice", password: "new"))
        #expect(read.expires == nil && read.refreshToken == nil && read.label == nil && read.attributes.isEmpty)
    }

    @Test("A rekey keeps every detail, and a changed label alone is stored and survives reopening")
    func rekeyKeepsDetailsAndALabelChangeIsAnUpdate() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(Self.detailed, for: Self.space)
        try storage.maintenance.rekey()
        #expect(try storage.credentials(for: Self.space)["alice"] == Self.detailed)
        var relabelled = Self.detailed
        relabelled.label = "personal"
        let before = try #require(try storage.entries().first?.modified)
        try storage.set(relabelled, for: Self.space)
        #expect(try storage.credentials(for: Self.space)["alice"]?.label == "personal")
        #expect(try storage.entries().first.map { $0.modified! >= before } == true)
        store.waitUntilClosed()
        #expect(try store.open().credentials(for: Self.space)["alice"] == relabelled)
    }

    @Test("No detail is in the clear in the store file")
    func detailsAreEncryptedAtRest() throws {
        let store = try TemporaryStore()
        try store.open().set(Self.detailed, for: Self.space)
        store.waitUntilClosed()
        let bytes = try store.files().values.reduce(into: Data()) { $0.append($1) }
        for canary in [Self.refreshToken, "work GitHub", "rotated by the SSO", "infra", "team", "prod"] {
            #expect(bytes.range(of: Data(canary.utf8)) == nil, "\(canary) is in the clear")
        }
    }

    @Test("Details that no line protocol or bundle can carry are refused, naming the field and not the value")
    func invalidDetailsAreRefused() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        let bad: [(Credential, String)] = [
            (Credential(user: "a", password: "p", refreshToken: "tok\nhost=evil"), "refresh token"),
            (Credential(user: "a", password: "p", label: "l\r"), "label"),
            (Credential(user: "a", password: "p", comment: "c\u{0}"), "comment"),
            (Credential(user: "a", password: "p", attributes: ["a=b": "v"]), "attribute name"),
            (Credential(user: "a", password: "p", attributes: ["": "v"]), "attribute name"),
            (Credential(user: "a", password: "p", attributes: ["n": "v\nx"]), "value of an attribute"),
            (Credential(user: "a", password: "p", label: String(repeating: "l", count: 4097)), "label"),
            (Credential(user: "a", password: String(repeating: "p", count: 600_000), comment: String(repeating: "c", count: 600_000)), "together"),
        ]
        for (credential, field) in bad {
            let error = #expect(throws: CredentialStorageError.self) { try storage.set(credential, for: Self.space) }
            #expect(error?.code == .invalidInput)
            #expect(error?.message.contains(field) == true, "\(error?.message ?? "")")
            #expect(error?.message.contains("evil") == false)
        }
        #expect(try storage.credentials(for: Self.space).isEmpty)
    }
}
