import Foundation
import Testing
import CredentialStore
import CredentialStoreCore
import CredentialStoreTestSupport

/// Client identities and server trust kept in the store: found by host and port as a TLS client
/// asks, never answering a password lookup, and never in the clear on disk.
@Suite(.cheapKeyDerivation) struct TLSItemTests {
    // Bytes that stand for DER: the store keeps them opaque, the TLS layer parses them.
    static let leaf = Array("leaf certificate: CN=alice-laptop, O=Example Corp".utf8)
    static let intermediate = Array("intermediate certificate: CN=Example Issuing CA".utf8)
    static let key = Array("private key bytes of alice-laptop, never in the clear".utf8)
    static let identity = ClientIdentity(certificateChain: [leaf, intermediate], privateKey: key,
                                         expires: Date(timeIntervalSince1970: 4_102_444_800))

    private func open(_ store: TemporaryStore) throws -> CredentialStorage {
        try CredentialStorage(at: store.databaseURL, key: .keyFile(store.keyFileURL), rollbackAnchor: .directory(store.anchorDirectory))
    }

    @Test func anIdentityIsFoundForItsHostThenItsHostOnAnyPortThenAnyHost() throws {
        let store = try TemporaryStore()
        let storage = try open(store)
        let general = ClientIdentity(certificateChain: [Array("general".utf8)], privateKey: Array("general key".utf8))
        let hostWide = ClientIdentity(certificateChain: [Array("host-wide".utf8)], privateKey: Array("host key".utf8))
        try storage.tls.setIdentity(general, for: .anyHost)
        try storage.tls.setIdentity(hostWide, for: TLSEndpoint(host: "API.example.com"))
        try storage.tls.setIdentity(Self.identity, for: TLSEndpoint(host: "api.example.com", port: 8443))

        #expect(try storage.tls.identity(forHost: "api.example.com", port: 8443) == Self.identity)
        #expect(try storage.tls.identity(forHost: "api.example.com", port: 443) == hostWide)
        #expect(try storage.tls.identity(forHost: "other.example.com", port: 443) == general)
        // Another process reads the same.
        #expect(try open(store).tls.identity(forHost: "api.example.com", port: 8443) == Self.identity)
        #expect(try storage.tls.identities().count == 3)
        #expect(try storage.tls.identities()[TLSEndpoint(host: "api.example.com", port: 8443)]?.persistence == .permanent)

        #expect(try storage.tls.removeIdentity(for: TLSEndpoint(host: "api.example.com", port: 8443)))
        #expect(try storage.tls.identity(forHost: "api.example.com", port: 8443) == hostWide)
    }

    @Test func anExpiredIdentityIsPassedOverButListed() throws {
        let storage = try open(try TemporaryStore())
        let expired = ClientIdentity(certificateChain: [Self.leaf], privateKey: Self.key, expires: Date(timeIntervalSinceNow: -60))
        try storage.tls.setIdentity(expired, for: TLSEndpoint(host: "api.example.com"))
        #expect(try storage.tls.identity(forHost: "api.example.com", port: 443) == nil)
        #expect(try storage.tls.identity(for: TLSEndpoint(host: "api.example.com")) != nil)
        #expect(try storage.tls.identities().count == 1)
    }

    @Test func noPasswordLookupEverAnswersWithAnIdentityOrATrust() throws {
        let storage = try open(try TemporaryStore())
        try storage.tls.setIdentity(Self.identity, for: TLSEndpoint(host: "api.example.com"))
        try storage.tls.setServerTrust(ServerTrust(pins: [PublicKeyPin(digest: Array(repeating: 7, count: 32))!]), for: TLSEndpoint(host: "api.example.com"))
        #expect(try storage.defaultCredential(answering: .request(URL(string: "https://api.example.com")!))?.credential == nil)
        #expect(try storage.defaultCredential(for: ProtectionSpace(host: "api.example.com", port: 443, protocol: "https", realm: nil)) == nil)
        #expect(try storage.defaultCredential(answering: .challenge(ProtectionSpace(host: "api.example.com", port: 443, protocol: "https", realm: "r")))?.credential == nil)
    }

    @Test func anItemForTheTierThatKeepsNothingIsNotStored() throws {
        let store = try TemporaryStore()
        let storage = try open(store)
        let trust = ServerTrust(pins: [PublicKeyPin(digest: Array(repeating: 3, count: 32))!])
        // `.none` as a caller writes it: the tier that keeps nothing, never "keep the old tier".
        try storage.tls.setIdentity(Self.identity, for: TLSEndpoint(host: "api.example.com"), persistence: .none)
        try storage.tls.setServerTrust(trust, for: TLSEndpoint(host: "api.example.com"), persistence: .none)
        #expect(try open(store).tls.identities().isEmpty)
        #expect(try open(store).tls.serverTrusts().isEmpty)
        #expect(try storage.tls.identity(forHost: "api.example.com", port: 443) == nil)
    }

    @Test func serverTrustKeepsItsPinsAndAnchorsAndFallsBackLikeIdentities() throws {
        let store = try TemporaryStore()
        let storage = try open(store)
        let current = PublicKeyPin(digest: Array(repeating: 1, count: 32))!
        let backup = PublicKeyPin(digest: Array(repeating: 2, count: 32))!
        let trust = ServerTrust(pins: [current, backup], anchors: [Array("private root CA".utf8)])
        try storage.tls.setServerTrust(trust, for: TLSEndpoint(host: "api.example.com"), persistence: .synchronizable)
        #expect(try storage.tls.serverTrust(forHost: "api.example.com", port: 8443) == trust)
        #expect(try storage.tls.serverTrust(forHost: "other.example.com", port: 443) == nil)
        #expect(try open(store).tls.serverTrusts()[TLSEndpoint(host: "api.example.com")]?.persistence == .synchronizable)
        #expect(throws: CredentialStorageError.self) { try storage.tls.setServerTrust(ServerTrust(), for: .anyHost) }
        #expect(throws: CredentialStorageError.self) {
            try storage.tls.setIdentity(ClientIdentity(certificateChain: [], privateKey: Self.key), for: .anyHost)
        }
        let kept = #expect(throws: CredentialStorageError.self) { try storage.tls.removeServerTrust(for: TLSEndpoint(host: "api.example.com")) }
        #expect(kept?.code == .synchronizableRemovalNeedsOption)
        #expect(try storage.tls.removeServerTrust(for: TLSEndpoint(host: "api.example.com"), options: .removeSynchronizable))
    }

    @Test func noKeyByteSubjectOrPinIsInTheClearInTheStoreOrABundle() throws {
        let store = try TemporaryStore()
        let storage = try open(store)
        let pin = PublicKeyPin(digest: Array(0..<32))!
        try storage.tls.setIdentity(Self.identity, for: TLSEndpoint(host: "api.example.com"), persistence: .synchronizable)
        try storage.tls.setServerTrust(ServerTrust(pins: [pin], anchors: [Self.intermediate]), for: TLSEndpoint(host: "api.example.com"), persistence: .synchronizable)
        let bundleURL = store.directory.deletingLastPathComponent().appendingPathComponent("tls-canary.bundle")
        try storage.sync.export(to: bundleURL, protection: .passphrase("bundle passphrase"))
        let bundle = try Data(contentsOf: bundleURL)
        // Another store, through the bundle, gets both back.
        let other = try open(try TemporaryStore())
        #expect(try other.sync.importBundle(from: bundleURL, passphrase: "bundle passphrase").added == 2)
        #expect(try other.tls.identity(forHost: "api.example.com", port: 443) == Self.identity)
        #expect(try other.tls.serverTrust(forHost: "api.example.com", port: 443)?.pins == [pin])

        // Raw, and as the store's text form writes them (base64), in every file and the bundle.
        let secrets: [[UInt8]] = [Self.key, Self.leaf, Self.intermediate, pin.digest, Array("alice-laptop".utf8), Array("Example Corp".utf8)]
        let forms = secrets.flatMap { [$0, Array(Data($0).base64EncodedString().utf8)] } + [Array(pin.description.utf8)]
        var haystacks = try store.files().map { ($0.key.lastPathComponent, [UInt8]($0.value)) }
        haystacks.append(("bundle", [UInt8](bundle)))
        for (name, contents) in haystacks {
            for form in forms {
                #expect(!contents.contains(form), "\(name) holds \(String(decoding: form.prefix(16), as: UTF8.self))… in the clear")
            }
        }
    }
}
