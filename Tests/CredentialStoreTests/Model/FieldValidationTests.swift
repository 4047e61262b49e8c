import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// No field a line protocol or a terminal prints may carry CR, LF or
/// NUL, and every space that enters a store passes the rules a URL's space does, whatever the path.
@Suite struct FieldValidationTests {
    static let breakers = ["\n", "\r", "\u{0}"]

    @Test("set and setDefaultCredential refuse a CR, LF or NUL in the user, password or realm", arguments: breakers)
    func setRefusesLineBreakingFields(breaker: String) throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        let injected = "pw\(breaker)host=github.com\(breaker)username=mallory"
        let cases: [(Credential, ProtectionSpace)] = [
            (Fixture.credential("alice", injected), Fixture.space()),
            (Fixture.credential("al\(breaker)ice"), Fixture.space()),
            (Fixture.credential("alice"), Fixture.space(realm: "R\(breaker)ealm")),
            (Fixture.credential("alice", injected, .synchronizable), Fixture.space()),
        ]
        for (credential, space) in cases {
            expectError(.invalidInput, secrets: [injected]) { try storage.set(credential, for: space) }
            expectError(.invalidInput, secrets: [injected]) { try storage.setDefaultCredential(credential, for: space) }
        }
        #expect(try storage.allCredentials().isEmpty)
        #expect(try storage.entries().isEmpty)
    }

    @Test func ordinaryControlFreeTextIsStillAccepted() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(Fixture.credential("al ice", "p\tw \"q\" ü"), for: Fixture.space(realm: "Zürich \"R\""))
        #expect(try storage.credentials(for: Fixture.space(realm: "Zürich \"R\""))["al ice"]?.password == "p\tw \"q\" ü")
    }

    @Test("Spaces a URL could never name are refused by every decoding", arguments: [
        ProtectionSpace(host: "evil host/with space", port: 999_999, protocol: "https", realm: nil),
        ProtectionSpace(host: "example.com", port: 999_999, protocol: "https", realm: nil),
        ProtectionSpace(host: "example.com", port: -5, protocol: "https", realm: nil),
        ProtectionSpace(host: "evil\u{9B}31m.example.com", port: 443, protocol: "https", realm: nil),
        ProtectionSpace(host: "example.com", port: 443, protocol: "ht tp", realm: nil),
        ProtectionSpace(host: "example.com", port: 443, protocol: "https", realm: "a\nb"),
        ProtectionSpace(proxy: ProxyEndpoint(host: "proxy.example.com", port: 3128, type: .http), realm: "\r"),
    ])
    func decodingValidates(space: ProtectionSpace) throws {
        #expect(throws: (any Error).self) { try space.validate() }
        #expect(throws: (any Error).self) { try ProtectionSpace(canonicalEncoding: space.canonicalEncoding) }
        let json = try JSONEncoder().encode(space)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(ProtectionSpace.self, from: json) }
    }

    @Test func aNonCanonicalEncodingIsRefused() throws {
        // Port 0 for https reads as 443: a second encoding of one space, with its own blind index.
        var writer = ByteWriter(capacity: 64)
        writer.append(UInt8(1))
        writer.append(UInt8(0))
        writer.append(optional: "https")
        writer.append("example.com")
        writer.append(Int64(0))
        writer.append(optional: String?.none)
        writer.append(AuthenticationMethod.default.rawValue)
        #expect(throws: (any Error).self) { try ProtectionSpace(canonicalEncoding: writer.bytes) }
        let canonical = ProtectionSpace(host: "example.com", port: 443, protocol: "https", realm: nil)
        #expect(try ProtectionSpace(canonicalEncoding: canonical.canonicalEncoding) == canonical)
    }

    @Test func aURLSpaceIsValidatedWhenBuilt() throws {
        expectError(.invalidInput) { try ProtectionSpace(url: URL(string: "https://example.com")!, realm: "x\ny") }
        #expect(try ProtectionSpace(url: URL(string: "https://example.com:8443")!).port == 8443)
    }

    @Test func descriptionsEscapeTerminalControls() {
        let space = ProtectionSpace(host: "example.com", port: 443, protocol: "https", realm: "\u{9B}31m\u{1B}]0;x\u{7}")
        #expect(!space.description.unicodeScalars.contains { FieldRules.isDisplayControl($0) }, "\(space.description.debugDescription)")
        let credential = Credential(user: "a\u{9B}2J", password: "p", persistence: .permanent)
        #expect(!credential.description.unicodeScalars.contains { FieldRules.isDisplayControl($0) })
    }
}

/// A trusted device's bundle passes the same rules as a local `set`: a line-breaking value or a
/// space a URL could not name is refused, and the store is left as it was.
@Suite struct BundleFieldValidationTests {
    let laptop: SyncPeer
    let desktop: SyncPeer

    init() throws {
        laptop = try SyncPeer()
        desktop = try SyncPeer()
        try trust([laptop, desktop], [laptop, desktop])
    }

    /// A bundle signed by the (trusted) laptop for the desktop, holding exactly `items`.
    private func forgedBundle(items: [SignedBundleItem], defaults: [SignedBundleDefault] = []) throws -> URL {
        let url = laptop.file("forged-\(UUID().uuidString).csbundle")
        try laptop.storage.writeBundle(items, defaults: defaults, for: [desktop.publicKey], to: url)
        return url
    }

    @Test func aBundleItemWithALineBreakIsRefused() throws {
        let target = desktop.storage
        try target.set(Fixture.credential("alice", "kept", .synchronizable), for: Fixture.space())
        let before = try StoreSnapshot(target).ignoringClock
        let injected = "pw\nhost=github.com\nusername=mallory\npassword=planted"
        for item in [
            SignedBundleItem(space: Fixture.space("evil.example.com"), user: "mallory", password: injected, wall: nowMillis()),
            SignedBundleItem(space: Fixture.space("evil.example.com"), user: "mal\rlory", password: "x", wall: nowMillis()),
            SignedBundleItem(space: Fixture.space("evil.example.com"), user: "mal\u{0}lory", password: nil, wall: nowMillis()),
        ] {
            let bundle = try forgedBundle(items: [item])
            expectError(.invalidInput, secrets: [injected]) { try target.sync.importBundle(from: bundle, dryRun: true) }
            expectError(.invalidInput, secrets: [injected]) { try target.sync.importBundle(from: bundle) }
        }
        let defaultChoice = try forgedBundle(items: [], defaults: [SignedBundleDefault(space: Fixture.space(), user: "a\nb", wall: nowMillis())])
        expectError(.invalidInput) { try target.sync.importBundle(from: defaultChoice) }
        #expect(try StoreSnapshot(target).ignoringClock == before)
    }

    @Test func aBundleSpaceNoURLCouldNameIsRefused() throws {
        let target = desktop.storage
        let before = try StoreSnapshot(target).ignoringClock
        for space in [
            ProtectionSpace(host: "evil host/with space", port: 999_999, protocol: "https", realm: nil),
            ProtectionSpace(host: "example.com", port: 999_999, protocol: "https", realm: nil),
            ProtectionSpace(host: "example.com", port: 443, protocol: "https", realm: "line\nbreak"),
        ] {
            let bundle = try forgedBundle(items: [SignedBundleItem(space: space, user: "mallory", password: "x", wall: nowMillis())])
            #expect(throws: CredentialStorageError.self) { try target.sync.importBundle(from: bundle) }
        }
        #expect(try StoreSnapshot(target).ignoringClock == before)
        #expect(try target.entries().isEmpty)
    }
}
