import CredentialStore
import CredentialStoreNetworking
import CredentialStoreTestSupport
import Foundation
import Logging
import Testing

@Suite struct ChallengeResponderTests {
    let api = URL(string: "https://api.example.com/v1/items")!
    let alice = Credential(user: "alice", password: "pw", persistence: .permanent)

    @Test func basicChallengeIsAnsweredWithTheStoredDefault() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(alice, for: ProtectionSpace(url: api, realm: "api"))
        let responder = CredentialChallengeResponder(storage: storage)

        let answer = try responder.answer(to: ChallengeResponse(url: api, status: 401, headers: [("WWW-Authenticate", #"Basic realm="api""#)]))
        // base64("alice:pw")
        #expect(answer.disposition == .useCredential(alice, authorization: "Basic YWxpY2U6cHc="))
        #expect(try answer.space == ProtectionSpace(url: api, realm: "api", authenticationMethod: .httpBasic))
    }

    @Test func proxyChallengeUsesTheProxySpaceKeptApartFromTheServerSpace() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        let proxyUser = Credential(user: "proxy-user", password: "proxy-pw", persistence: .permanent)
        try storage.set(alice, for: ProtectionSpace(url: api, realm: "corp"))
        try storage.set(proxyUser, for: ProtectionSpace(proxy: ProxyEndpoint(host: "proxy.local", port: 3128, type: .http), realm: "corp"))
        let responder = CredentialChallengeResponder(storage: storage, allowsBasicOverPlainHTTP: true)
        let proxy = ProxyEndpoint(host: "proxy.local", port: 3128, type: .http)

        let proxyAnswer = try responder.answer(to: ChallengeResponse(url: api, status: 407, headers: [("Proxy-Authenticate", #"Basic realm="corp""#)]), proxy: proxy)
        #expect(proxyAnswer.disposition == .useCredential(proxyUser, authorization: try AuthorizationValue.basic(user: "proxy-user", password: "proxy-pw")))
        #expect(proxyAnswer.space?.isProxy == true)

        let serverAnswer = try responder.answer(to: ChallengeResponse(url: api, status: 401, headers: [("WWW-Authenticate", #"Basic realm="corp""#)]), proxy: proxy)
        #expect(serverAnswer.disposition == .useCredential(alice, authorization: "Basic YWxpY2U6cHc="))
        #expect(serverAnswer.space?.isProxy == false)

        // A 407 names the proxy's challenge header, never the server's.
        let wrongHeader = try responder.answer(to: ChallengeResponse(url: api, status: 407, headers: [("WWW-Authenticate", #"Basic realm="corp""#)]), proxy: proxy).disposition
        #expect(wrongHeader == .performDefaultHandling)
    }

    /// The credential people store (no realm) answers a server's and a proxy's
    /// challenge, which always name a realm; a Digest-only one is never sent as Basic.
    @Test func credentialsStoredWithoutARealmAnswerTheChallengesThatNameOne() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        let proxyUser = Credential(user: "proxy-user", password: "proxy-pw", persistence: .permanent)
        try storage.set(alice, for: ProtectionSpace(url: URL(string: "https://api.example.com")!))
        try storage.set(proxyUser, for: ProtectionSpace(proxy: ProxyEndpoint(host: "proxy.local", port: 3128, type: .http), realm: nil))
        let responder = CredentialChallengeResponder(storage: storage, allowsBasicOverPlainHTTP: true)
        let proxy = ProxyEndpoint(host: "proxy.local", port: 3128, type: .http)

        let server = try responder.answer(to: ChallengeResponse(url: api, status: 401, headers: [("WWW-Authenticate", #"Basic realm="Staff""#)])).disposition
        #expect(server == .useCredential(alice, authorization: "Basic YWxpY2U6cHc="))
        let viaProxy = try responder.answer(to: ChallengeResponse(url: api, status: 407, headers: [("Proxy-Authenticate", #"Basic realm="tinyproxy""#)]), proxy: proxy).disposition
        #expect(viaProxy == .useCredential(proxyUser, authorization: try AuthorizationValue.basic(user: "proxy-user", password: "proxy-pw")))
        // A challenge without a realm names no space.
        #expect(try responder.answer(to: ChallengeResponse(url: api, status: 401, headers: [("WWW-Authenticate", "Basic")])).disposition == .rejectProtectionSpace)

        let digestOnly = try TemporaryStore()
        let digestStorage = try digestOnly.open()
        try digestStorage.set(alice, for: ProtectionSpace(url: api, authenticationMethod: .httpDigest))
        let basicOnly = CredentialChallengeResponder(storage: digestStorage)
        #expect(try basicOnly.answer(to: ChallengeResponse(url: api, status: 401, headers: [("WWW-Authenticate", #"Basic realm="Staff""#)])).disposition == .performDefaultHandling)
    }

    @Test func aStoredCredentialThatFailedIsNotRetried() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(alice, for: ProtectionSpace(url: api, realm: "api"))
        let responder = CredentialChallengeResponder(storage: storage)
        let headers = [(name: "WWW-Authenticate", value: #"Basic realm="api""#)]

        for failures in 1...3 {
            #expect(try responder.answer(to: ChallengeResponse(url: api, status: 401, headers: headers), previousFailureCount: failures).disposition == .cancel)
        }
    }

    @Test func nothingStoredMeansDefaultHandling() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(alice, for: ProtectionSpace(url: api, realm: "other"))
        let responder = CredentialChallengeResponder(storage: storage)

        #expect(try responder.answer(to: ChallengeResponse(url: api, status: 401, headers: [("WWW-Authenticate", #"Basic realm="api""#)])).disposition == .performDefaultHandling)
        #expect(try responder.answer(to: ChallengeResponse(url: api, status: 401, headers: [("WWW-Authenticate", #"Basic realm="api""#)]), previousFailureCount: 1).disposition == .performDefaultHandling)
        #expect(try responder.answer(to: ChallengeResponse(url: api, status: 200, headers: [])).disposition == .performDefaultHandling)
        // A malformed challenge cannot be answered either.
        #expect(try responder.answer(to: ChallengeResponse(url: api, status: 401, headers: [("WWW-Authenticate", "Basic realm=\"unterminated")])).disposition == .performDefaultHandling)
    }

    @Test func onlyUnanswerableSchemesRejectTheSpace() throws {
        let store = try TemporaryStore()
        let responder = CredentialChallengeResponder(storage: try store.open())
        let disposition = try responder.answer(to: ChallengeResponse(url: api, status: 401, headers: [("WWW-Authenticate", "Negotiate"), ("WWW-Authenticate", "NTLM")])).disposition
        #expect(disposition == .rejectProtectionSpace)
    }

    @Test func digestChallengeGetsAVerifiableResponse() throws {
        // The worked example of RFC 2617 §3.5.
        let url = URL(string: "http://www.nowhere.org/dir/index.html")!
        let mufasa = Credential(user: "Mufasa", password: "Circle Of Life", persistence: .permanent)
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(mufasa, for: ProtectionSpace(url: url, realm: "testrealm@host.com"))
        let responder = CredentialChallengeResponder(storage: storage, clientNonce: { "0a4f113b" })
        let header = #"Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41""#

        let disposition = try responder.answer(to: ChallengeResponse(url: url, status: 401, headers: [("WWW-Authenticate", header)])).disposition
        guard case .useCredential(let credential, let authorization) = disposition else {
            Issue.record("expected a credential, got \(disposition)")
            return
        }
        #expect(credential == mufasa)
        #expect(authorization.hasPrefix("Digest "))
        #expect(authorization.contains(#"response="6629fae49393a05397450978507c4ef1""#))
        #expect(authorization.contains("nc=00000001"))
        #expect(authorization.contains(#"cnonce="0a4f113b""#))
        #expect(authorization.contains(#"uri="/dir/index.html""#))

        var digest = try DigestResponder(challenge: try #require(AuthenticationChallenge.parse([header]).first), clientNonce: { "0a4f113b" })
        #expect(try digest.authorization(method: "GET", uri: "/dir/index.html", credential: mufasa) == authorization)
    }

    @Test func aStaleDigestNonceAllowsOneRetryWithTheSameCredential() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(alice, for: ProtectionSpace(url: api, realm: "api"))
        let responder = CredentialChallengeResponder(storage: storage)
        let stale = [(name: "WWW-Authenticate", value: #"Digest realm="api", nonce="n2", qop="auth", stale=true"#)]

        let first = try responder.answer(to: ChallengeResponse(url: api, status: 401, headers: stale), previousFailureCount: 1).disposition
        guard case .useCredential(let credential, _) = first else {
            Issue.record("expected a retry after a stale nonce, got \(first)")
            return
        }
        #expect(credential == alice)
        #expect(try responder.answer(to: ChallengeResponse(url: api, status: 401, headers: stale), previousFailureCount: 2).disposition == .cancel)
    }

    /// The store's own answer, found through a fallback (here the origin's credential without a
    /// realm), is not copied into the challenge's space on success: a copy there would answer
    /// first from then on, so replacing or removing the credential where the user stored it would
    /// not stop the old password being sent.
    @Test func succeededWithTheStoresOwnAnswerLeavesNoCopyBehind() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        let origin = try ProtectionSpace(url: URL(string: "https://api.example.com")!)
        try storage.set(alice, for: origin)
        let responder = CredentialChallengeResponder(storage: storage)
        let challenge = [(name: "WWW-Authenticate", value: #"Basic realm="Staff""#)]

        let answer = try responder.answer(to: ChallengeResponse(url: api, status: 401, headers: challenge))
        guard case .useCredential(let credential, _) = answer.disposition, let space = answer.space else {
            Issue.record("not answered: \(answer.disposition)")
            return
        }
        try responder.succeeded(credential, for: space)
        #expect(try storage.credentials(for: space).isEmpty)

        #expect(try storage.remove(user: "alice", for: origin))
        #expect(try responder.answer(to: ChallengeResponse(url: api, status: 401, headers: challenge)).disposition == .performDefaultHandling)
    }

    /// A fallback never lifts the refusal of Basic over plain http: the origin's credential
    /// without a realm (or the realm's space without a method) answers Digest there, never Basic,
    /// unless opted in.
    @Test func aFallbackCredentialIsNotSentAsBasicOverPlainHTTP() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        let plain = URL(string: "http://intranet.example.com/x")!
        try storage.set(alice, for: ProtectionSpace(url: plain))
        try storage.set(alice, for: ProtectionSpace(url: plain, realm: "Staff"))
        let responder = CredentialChallengeResponder(storage: storage)
        for realm in ["Staff", "Other"] {
            #expect(try responder.answer(to: ChallengeResponse(url: plain, status: 401, headers: [("WWW-Authenticate", "Basic realm=\"\(realm)\"")])).disposition == .performDefaultHandling)
            let digest = try responder.answer(to: ChallengeResponse(url: plain, status: 401, headers: [("WWW-Authenticate", "Digest realm=\"\(realm)\", nonce=\"n\", qop=\"auth\"")]))
            guard case .useCredential(let credential, let authorization) = digest.disposition else {
                Issue.record("Digest not answered in \(realm): \(digest.disposition)")
                continue
            }
            #expect(credential == alice && authorization.hasPrefix("Digest "))
        }
        let optedIn = CredentialChallengeResponder(storage: storage, allowsBasicOverPlainHTTP: true)
        #expect(try optedIn.answer(to: ChallengeResponse(url: plain, status: 401, headers: [("WWW-Authenticate", #"Basic realm="Other""#)])).disposition
                == .useCredential(alice, authorization: "Basic YWxpY2U6cHc="))
    }

    /// Basic over plain http to a server or proxy on loopback stays on the machine: answered
    /// without the opt-in. A host that only looks like loopback is not, and a declined challenge
    /// is logged at notice, naming the space and never the password.
    @Test func basicOverPlainHTTPNeedsNoOptInOnLoopbackOnly() throws {
        let store = try TemporaryStore()
        let log = CapturedLog()
        let storage = try CredentialStorage(
            at: store.databaseURL, key: .keyFile(store.keyFileURL), logger: Logger(label: "test") { _ in log },
            rollbackAnchor: .directory(store.anchorDirectory))
        let responder = CredentialChallengeResponder(storage: storage)
        let basic: [(name: String, value: String)] = [("WWW-Authenticate", #"Basic realm="dev""#)]
        for host in ["127.0.0.1", "127.8.9.10", "[::1]", "localhost", "LocalHost.", "api.localhost"] {
            let url = URL(string: "http://\(host):8080/x")!
            try storage.set(alice, for: ProtectionSpace(url: url, realm: "dev"))
            #expect(try responder.answer(to: ChallengeResponse(url: url, status: 401, headers: basic)).disposition == .useCredential(alice, authorization: "Basic YWxpY2U6cHc="),
                    "\(host) is loopback")
        }
        var declined: [CapturedLog.Message] { log.messages.filter { $0.text.hasPrefix("declined") } }
        #expect(declined.isEmpty)
        for host in ["127.0.0.1.example.com", "localhost.example.com", "128.0.0.1", "10.0.0.1", "intranet.example.com"] {
            let url = URL(string: "http://\(host):8080/x")!
            try storage.set(alice, for: ProtectionSpace(url: url, realm: "dev"))
            #expect(try responder.answer(to: ChallengeResponse(url: url, status: 401, headers: basic)).disposition == .performDefaultHandling, "\(host) is not loopback")
        }
        #expect(declined.count == 5)
        #expect(declined.allSatisfy { $0.level == .notice && $0.text.contains("allowsBasicOverPlainHTTP") && !$0.text.contains("pw") })
        #expect(declined.first?.space.contains("127.0.0.1.example.com") == true)
        // A proxy on loopback too.
        try storage.set(alice, for: ProtectionSpace(proxy: ProxyEndpoint(host: "127.0.0.1", port: 8888, type: .http), realm: "Tinyproxy"))
        let proxied = try responder.answer(
            to: ChallengeResponse(url: URL(string: "http://intranet.example.com/")!, status: 407, headers: [("Proxy-Authenticate", #"Basic realm="Tinyproxy""#)]),
            proxy: ProxyEndpoint(host: "127.0.0.1", port: 8888, type: .http)).disposition
        #expect(proxied == .useCredential(alice, authorization: "Basic YWxpY2U6cHc="))
    }

    @Test func succeededStoresPerPersistence() throws {
        let store = try TemporaryStore()
        let space = try ProtectionSpace(url: api, realm: "api", authenticationMethod: .httpBasic)
        do {
            let storage = try store.open()
            let responder = CredentialChallengeResponder(storage: storage)
            try responder.succeeded(Credential(user: "none", password: "x", persistence: .none), for: space)
            try responder.succeeded(Credential(user: "session", password: "x", persistence: .forSession), for: space)
            try responder.succeeded(alice, for: space)
            #expect(Set(try storage.credentials(for: space).keys) == ["session", "alice"])
        }
        let reopened = try store.open()
        #expect(Set(try reopened.credentials(for: space).keys) == ["alice"])
    }
}
