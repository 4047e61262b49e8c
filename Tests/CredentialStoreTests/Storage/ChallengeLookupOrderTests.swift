import Foundation
import Testing
import CredentialStore
import CredentialStoreTestSupport

/// The one order in which a challenge's space finds its credential:
/// the exact space; the same realm under a compatible method (`.default` means any password
/// method, a Digest-only credential never answers Basic); the origin's credential without a realm.
/// Never across scheme, host, port or between proxy and server; a challenge without a realm
/// answers nothing.
@Suite struct ChallengeLookupOrderTests {
    let store: TemporaryStore
    let storage: CredentialStorage

    init() throws {
        store = try TemporaryStore()
        storage = try store.open()
    }

    func challenge(realm: String?, _ method: AuthenticationMethod, host: String = "api.example.com",
                   port: Int = 443, scheme: String = "https") -> ProtectionSpace {
        ProtectionSpace(host: host, port: port, protocol: scheme, realm: realm, authenticationMethod: method)
    }

    @Test func aCredentialStoredWithoutARealmAnswersAServersBasicAndDigestChallenges() throws {
        // What `credstore add https://api.example.com --user bob` stores.
        try storage.set(Fixture.credential("bob", "pw-bob"), for: ProtectionSpace(url: URL(string: "https://api.example.com")!))

        #expect(try storage.defaultCredential(answering: .challenge(challenge(realm: "Staff", .httpBasic)))?.credential.user == "bob")
        #expect(try storage.defaultCredential(answering: .challenge(challenge(realm: "Staff", .httpDigest)))?.credential.user == "bob")
        #expect(try storage.defaultCredential(answering: .request(URL(string: "https://api.example.com/x")!, realm: "Staff"))?.credential.user == "bob")
    }

    @Test func theMatchNamesTheSpaceThatAnsweredSoThatARemovalReachesIt() throws {
        let origin = try ProtectionSpace(url: URL(string: "https://api.example.com")!)
        try storage.set(Fixture.credential("bob", "pw-bob"), for: origin)
        let staffAnyMethod = Fixture.space(realm: "Staff")
        try storage.set(Fixture.credential("staff", "pw-staff"), for: staffAnyMethod)

        // A Digest challenge for Staff is answered by the credential stored for any method.
        let digest = try #require(try storage.defaultCredential(answering: .challenge(challenge(realm: "Staff", .httpDigest))))
        #expect(digest.space == staffAnyMethod && digest.credential.user == "staff")
        // Another realm's challenge falls back to the origin's credential, which has no realm.
        let admins = try #require(try storage.defaultCredential(answering: .challenge(challenge(realm: "Admins", .httpBasic))))
        #expect(admins.space == origin && admins.credential.user == "bob")
        // A request without a realm takes the origin's own first.
        #expect(try storage.defaultCredential(answering: .request(URL(string: "https://api.example.com/x")!))?.space == origin)

        // The named space is where the credential lives: removing it there stops the answer.
        #expect(try storage.remove(user: admins.credential.user, for: admins.space))
        #expect(try storage.defaultCredential(answering: .challenge(challenge(realm: "Admins", .httpBasic))) == nil)
        // Now the one realm on the origin answers a request without a realm, and says which.
        #expect(try storage.defaultCredential(answering: .request(URL(string: "https://api.example.com/x")!))?.space == staffAnyMethod)
    }

    @Test func theRealmsOwnCredentialComesBeforeTheOriginsRealmlessOne() throws {
        try storage.set(Fixture.credential("origin-wide"), for: Fixture.space())
        try storage.set(Fixture.credential("staff"), for: Fixture.space(realm: "Staff"))
        try storage.set(Fixture.credential("basic-only"), for: Fixture.space(realm: "Admins", method: .httpBasic))

        #expect(try storage.defaultCredential(answering: .challenge(challenge(realm: "Staff", .httpBasic)))?.credential.user == "staff")
        #expect(try storage.defaultCredential(answering: .challenge(challenge(realm: "Staff", .httpDigest)))?.credential.user == "staff")
        // Basic's credential answers Digest in its realm before the realm-less one.
        #expect(try storage.defaultCredential(answering: .challenge(challenge(realm: "Admins", .httpDigest)))?.credential.user == "basic-only")
        #expect(try storage.defaultCredential(answering: .challenge(challenge(realm: "Other", .httpBasic)))?.credential.user == "origin-wide")
    }

    @Test func theExactMethodComesBeforeAnyMethod() throws {
        try storage.set(Fixture.credential("any"), for: Fixture.space(realm: "Staff"))
        try storage.set(Fixture.credential("digest"), for: Fixture.space(realm: "Staff", method: .httpDigest))
        try storage.set(Fixture.credential("basic"), for: Fixture.space(realm: "Staff", method: .httpBasic))

        #expect(try storage.defaultCredential(answering: .challenge(challenge(realm: "Staff", .httpDigest)))?.credential.user == "digest")
        #expect(try storage.defaultCredential(answering: .challenge(challenge(realm: "Staff", .httpBasic)))?.credential.user == "basic")
        #expect(try storage.defaultCredential(for: Fixture.space(realm: "Staff"))?.user == "any")
    }

    @Test func defaultMeansAnyPasswordMethodInPlainLookupsToo() throws {
        try storage.set(Fixture.credential("any"), for: Fixture.space(realm: "Staff"))
        try storage.set(Fixture.credential("basic"), for: Fixture.space(realm: "Admins", method: .httpBasic))

        #expect(try storage.defaultCredential(for: Fixture.space(realm: "Staff", method: .httpBasic))?.user == "any")
        #expect(try storage.defaultCredential(for: Fixture.space(realm: "Staff", method: .httpDigest))?.user == "any")
        #expect(try storage.defaultCredential(for: Fixture.space(realm: "Admins"))?.user == "basic")
        // Other methods are their own spaces.
        #expect(try storage.defaultCredential(for: Fixture.space(realm: "Staff", method: .ntlm)) == nil)
        // Listing a space stays exact: the Basic space holds nothing of its own.
        #expect(try storage.credentials(for: Fixture.space(realm: "Staff", method: .httpBasic)).isEmpty)
    }

    @Test func aCredentialStoredForDigestNeverAnswersBasic() throws {
        try storage.set(Fixture.credential("digest"), for: Fixture.space(realm: "Staff", method: .httpDigest))
        try storage.set(Fixture.credential("digest-anywhere"), for: Fixture.space(method: .httpDigest))

        #expect(try storage.defaultCredential(answering: .challenge(challenge(realm: "Staff", .httpBasic)))?.credential == nil)
        #expect(try storage.defaultCredential(for: Fixture.space(realm: "Staff")) == nil)
        #expect(try storage.defaultCredential(answering: .request(URL(string: "https://api.example.com")!, realm: "Staff"))?.credential == nil)
        // Digest is answered, from its realm and then from the origin.
        #expect(try storage.defaultCredential(answering: .challenge(challenge(realm: "Staff", .httpDigest)))?.credential.user == "digest")
        #expect(try storage.defaultCredential(answering: .challenge(challenge(realm: "Other", .httpDigest)))?.credential.user == "digest-anywhere")
    }

    @Test func aLookupWithoutAMethodNeverReturnsACredentialStoredForDigest() throws {
        try storage.set(Fixture.credential("digest"), for: Fixture.space(realm: "Staff", method: .httpDigest))
        try storage.set(Fixture.credential("form"), for: Fixture.space(realm: "Login", method: .htmlForm))

        // Once the only space on the origin with a default, it was returned to callers that send Basic.
        #expect(try storage.defaultCredential(answering: .request(URL(string: "https://api.example.com/")!))?.credential == nil)
        try storage.set(Fixture.credential("basic"), for: Fixture.space(realm: "Admins", method: .httpBasic))
        #expect(try storage.defaultCredential(answering: .request(URL(string: "https://api.example.com/")!))?.credential.user == "basic")
    }

    @Test func aChallengeWithoutARealmAnswersNothing() throws {
        try storage.set(Fixture.credential("bob"), for: Fixture.space())
        try storage.set(Fixture.credential("staff"), for: Fixture.space(realm: "Staff"))

        #expect(try storage.defaultCredential(answering: .challenge(challenge(realm: nil, .httpBasic)))?.credential == nil)
        #expect(try storage.defaultCredential(answering: .challenge(challenge(realm: "", .httpBasic)))?.credential == nil)
    }

    @Test func neverAcrossSchemeHostOrPort() throws {
        try storage.set(Fixture.credential("bob"), for: Fixture.space())

        #expect(try storage.defaultCredential(answering: .challenge(challenge(realm: "R", .httpBasic, port: 80, scheme: "http")))?.credential == nil)
        #expect(try storage.defaultCredential(answering: .challenge(challenge(realm: "R", .httpBasic, port: 8443)))?.credential == nil)
        #expect(try storage.defaultCredential(answering: .challenge(challenge(realm: "R", .httpBasic, host: "www.example.com")))?.credential == nil)
    }

    @Test func aProxysCredentialWithoutARealmAnswersItsOwn407AndNothingElse() throws {
        // What `credstore add --proxy http … --user bob` stores.
        try storage.set(Fixture.credential("proxy-user"), for: ProtectionSpace(proxy: ProxyEndpoint(host: "proxy.example.com", port: 3128, type: .http), realm: nil))
        try storage.set(Fixture.credential("server-user"), for: ProtectionSpace(host: "proxy.example.com", port: 3128, protocol: "http", realm: nil))

        let proxyChallenge = ProtectionSpace(proxy: ProxyEndpoint(host: "proxy.example.com", port: 3128, type: .http),
                                             realm: "tinyproxy", authenticationMethod: .httpBasic)
        #expect(try storage.defaultCredential(answering: .challenge(proxyChallenge))?.credential.user == "proxy-user")
        let serverChallenge = challenge(realm: "tinyproxy", .httpBasic, host: "proxy.example.com", port: 3128, scheme: "http")
        #expect(try storage.defaultCredential(answering: .challenge(serverChallenge))?.credential.user == "server-user")
        // Another proxy type on the same host and port is another origin.
        let httpsProxy = ProtectionSpace(proxy: ProxyEndpoint(host: "proxy.example.com", port: 3128, type: .https),
                                         realm: "tinyproxy", authenticationMethod: .httpBasic)
        #expect(try storage.defaultCredential(answering: .challenge(httpsProxy))?.credential == nil)
    }

    /// Another instance's rekey leaves this one's keys stale, so its stored rows read as missing
    /// until it follows: a session credential in a compatible method's space must not answer in
    /// the meantime, ahead of the stored credential of the exact space.
    @Test func aSessionCredentialInAFallbackSpaceDoesNotHideTheExactSpaceAfterARekey() throws {
        let digest = Fixture.space(realm: "Staff", method: .httpDigest)
        try storage.set(Fixture.credential("stored-digest", "d"), for: digest)
        let other = try store.open()
        try other.set(Credential(user: "session-basic", password: "s", persistence: .forSession),
                      for: Fixture.space(realm: "Staff", method: .httpBasic))
        #expect(try other.defaultCredential(answering: .challenge(digest))?.credential.user == "stored-digest")

        try storage.maintenance.rekey()
        #expect(try other.defaultCredential(answering: .challenge(digest))?.credential.user == "stored-digest")
        #expect(try other.defaultCredential(for: digest)?.user == "stored-digest")
    }

    @Test func aLookupWithoutARealmCountsARealmOnceWhateverItsMethods() throws {
        try storage.set(Fixture.credential("any"), for: Fixture.space(realm: "Staff"))
        try storage.set(Fixture.credential("basic"), for: Fixture.space(realm: "Staff", method: .httpBasic))

        // One realm with two password spaces is not ambiguous: the lookup without a method wins.
        #expect(try storage.defaultCredential(answering: .request(URL(string: "https://api.example.com/")!))?.credential.user == "any")
    }
}

/// The calls people reach for, without a dummy password.
@Suite struct ConvenienceTests {
    @Test func setDefaultByUserKeepsThePasswordAndTier() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        let space = Fixture.space(realm: "Staff")
        try storage.set(Credential(user: "alice", password: "pw-alice"), for: space)
        try storage.set(Credential(user: "bob", password: "pw-bob", persistence: .synchronizable), for: space)

        try storage.setDefault(user: "bob", for: space)
        #expect(try storage.defaultCredential(for: space) == Credential(user: "bob", password: "pw-bob", persistence: .synchronizable))
        #expect(try store.open().defaultCredential(for: space)?.user == "bob")

        expectError(.notFound) { try storage.setDefault(user: "carol", for: space) }
        #expect(try storage.defaultCredential(for: space)?.user == "bob")
    }

    @Test func removeByUserNeedsTheOptionForASynchronizableCredential() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        let space = Fixture.space()
        try storage.set(Credential(user: "alice", password: "pw-alice"), for: space)
        try storage.set(Credential(user: "sync", password: "pw", persistence: .synchronizable), for: space)

        #expect(try storage.remove(user: "alice", for: space))
        #expect(try storage.remove(user: "alice", for: space) == false)
        expectError(.synchronizableRemovalNeedsOption) { try storage.remove(user: "sync", for: space) }
        #expect(try storage.remove(user: "sync", for: space, options: .removeSynchronizable))
        #expect(try storage.credentials(for: space).isEmpty)
    }

    @Test func aCredentialIsPermanentUnlessToldOtherwise() {
        #expect(Credential(user: "alice", password: "pw").persistence == .permanent)
    }
}
