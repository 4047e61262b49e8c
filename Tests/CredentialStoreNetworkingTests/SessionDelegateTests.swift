import CredentialStore
import CredentialStoreNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CredentialStoreTestSupport
import Testing

/// The sender a hand-made challenge needs; the delegate under test answers through its
/// completion handler, never through the sender.
private final class UnusedSender: NSObject, URLAuthenticationChallengeSender, Sendable {
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
    func cancel(_ challenge: URLAuthenticationChallenge) {}
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
}

/// A challenge as corelibs (or Apple's URL loading) builds it for a 401 or a proxy's 407.
private func challenge(_ space: URLProtectionSpace, failures: Int = 0) -> URLAuthenticationChallenge {
    URLAuthenticationChallenge(protectionSpace: space, proposedCredential: nil, previousFailureCount: failures,
                               failureResponse: nil, error: nil, sender: UnusedSender())
}

private func serverSpace(_ scheme: String = "https", realm: String? = "r", method: String = NSURLAuthenticationMethodHTTPBasic) -> URLProtectionSpace {
    URLProtectionSpace(host: "intranet.example.com", port: scheme == "https" ? 443 : 80, protocol: scheme, realm: realm, authenticationMethod: method)
}

/// What a platform does with a password challenge the delegate cannot answer: corelibs leaves a
/// task suspended on `.performDefaultHandling`, so the delegate cancels there.
#if canImport(FoundationNetworking)
private let unanswered = URLSession.AuthChallengeDisposition.cancelAuthenticationChallenge
#else
private let unanswered = URLSession.AuthChallengeDisposition.performDefaultHandling
#endif

@Suite struct CredentialForChallengeTests {
    @Test func aCredentialStoredWithoutARealmAnswersTheOriginsBasicChallenge() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(Credential(user: "bob", password: "pw", persistence: .permanent),
                        for: ProtectionSpace(url: URL(string: "https://intranet.example.com")!))

        let credential = try storage.credential(for: challenge(serverSpace()))
        #expect(credential?.user == "bob")
        #expect(credential?.password == "pw")
        #expect(credential?.persistence == .permanent, "the stored tier, as URLCredentialStorage gives it")
    }

    @Test func aChallengeWithoutARealmGetsNothing() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(Credential(user: "bob", password: "pw", persistence: .permanent),
                        for: ProtectionSpace(url: URL(string: "https://intranet.example.com")!))

        #expect(try storage.credential(for: challenge(serverSpace(realm: nil))) == nil)
        #expect(try storage.credential(for: challenge(serverSpace(realm: ""))) == nil)
    }

    @Test func aDigestCredentialIsNeverReturnedForBasic() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(Credential(user: "bob", password: "pw", persistence: .permanent),
                        for: ProtectionSpace(host: "intranet.example.com", port: 443, protocol: "https", realm: "r", authenticationMethod: .httpDigest))

        #expect(try storage.credential(for: challenge(serverSpace())) == nil)
        #expect(try storage.credential(for: challenge(serverSpace(method: NSURLAuthenticationMethodHTTPDigest)))?.user == "bob")
    }

    @Test func aProxyChallengeIsAnsweredFromTheProxySpaceOnly() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(Credential(user: "server-user", password: "pw", persistence: .permanent),
                        for: ProtectionSpace(host: "proxy.example.com", port: 3128, protocol: "http", realm: nil))
        let proxyChallenge = challenge(URLProtectionSpace(proxyHost: "proxy.example.com", port: 3128, type: NSURLProtectionSpaceHTTPProxy,
                                                           realm: "Tinyproxy", authenticationMethod: NSURLAuthenticationMethodHTTPBasic))
        #expect(try storage.credential(for: proxyChallenge) == nil, "a server's credential never answers a proxy")

        try storage.set(Credential(user: "proxy-user", password: "pw", persistence: .permanent),
                        for: ProtectionSpace(proxy: ProxyEndpoint(host: "proxy.example.com", port: 3128, type: .http), realm: nil))
        #expect(try storage.credential(for: proxyChallenge)?.user == "proxy-user")
    }

    @Test func aServerTrustChallengeGetsNothing() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(Credential(user: "bob", password: "pw", persistence: .permanent),
                        for: ProtectionSpace(url: URL(string: "https://intranet.example.com")!))
        #expect(try storage.credential(for: challenge(serverSpace(method: AuthenticationMethod.serverTrust.rawValue))) == nil)
    }
}

@Suite struct SessionDelegateDispositionTests {
    private func delegate(allowsBasicOverPlainHTTP: Bool = false) throws -> (CredentialStoreSessionDelegate, TemporaryStore) {
        let store = try TemporaryStore()
        let storage = try store.open()
        for scheme in ["https", "http"] {
            try storage.set(Credential(user: "bob", password: "pw", persistence: .permanent),
                            for: ProtectionSpace(url: URL(string: "\(scheme)://intranet.example.com")!))
        }
        return (CredentialStoreSessionDelegate(storage: storage, allowsBasicOverPlainHTTP: allowsBasicOverPlainHTTP), store)
    }

    @Test func basicIsAnsweredWithACopyFoundationKeepsNowhere() throws {
        let (delegate, _) = try delegate()
        let (disposition, credential) = delegate.disposition(for: challenge(serverSpace()))
        #expect(disposition == .useCredential)
        #expect(credential?.user == "bob")
        #expect(credential?.password == "pw")
        #expect(credential?.persistence == URLCredential.Persistence.none)
    }

    @Test func aCredentialThatFailedIsNotSentAgain() throws {
        let (delegate, _) = try delegate()
        let (disposition, credential) = delegate.disposition(for: challenge(serverSpace(), failures: 1))
        #expect(disposition == unanswered)
        #expect(credential == nil)
    }

    @Test func basicOverPlainHTTPNeedsTheOptIn() throws {
        let (refusing, _) = try delegate()
        #expect(refusing.disposition(for: challenge(serverSpace("http"))).0 == unanswered)
        let (allowing, _) = try delegate(allowsBasicOverPlainHTTP: true)
        #expect(allowing.disposition(for: challenge(serverSpace("http"))).0 == .useCredential)
    }

    @Test func digestIsLeftToFoundationWhereItCanSendIt() throws {
        let (delegate, _) = try delegate()
        let (disposition, credential) = delegate.disposition(for: challenge(serverSpace(method: NSURLAuthenticationMethodHTTPDigest)))
        #if canImport(FoundationNetworking)
        // corelibs cannot send a Digest answer: `.useCredential` would reach its fatalError.
        #expect(disposition == .cancelAuthenticationChallenge)
        #expect(credential == nil)
        #else
        #expect(disposition == .useCredential)
        #expect(credential?.user == "bob")
        #endif
    }

    @Test func challengesForSomethingElseThanAPasswordGetDefaultHandling() throws {
        let (delegate, _) = try delegate()
        for method in [AuthenticationMethod.serverTrust, .clientCertificate, .ntlm].map(\.rawValue) {
            #expect(delegate.disposition(for: challenge(serverSpace(method: method))).0 == .performDefaultHandling)
        }
    }

    @Test func nothingStoredLeavesTheChallengeUnanswered() throws {
        let store = try TemporaryStore()
        let delegate = CredentialStoreSessionDelegate(storage: try store.open())
        #expect(delegate.disposition(for: challenge(serverSpace())).0 == unanswered)
    }
}

/// The delegate in a real URLSession against lighttpd, and the bridge on the same session for
/// what corelibs hands no delegate, with credentials stored as a new user stores them: without a
/// realm.
@Suite(.serialized, .enabled(if: LighttpdServer.isInstalled, "needs lighttpd (apt-get install lighttpd)"))
struct SessionDelegateRealServerTests {
    private func scene(password: String = "right") throws -> (LighttpdServer, CredentialStoreSessionDelegate, URLSession, TemporaryStore) {
        let server = try LighttpdServer(user: "alice", password: "right")
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(Credential(user: "alice", password: password, persistence: .permanent), for: ProtectionSpace(url: server.baseURL))
        let delegate = CredentialStoreSessionDelegate(storage: storage, allowsBasicOverPlainHTTP: true)
        return (server, delegate, URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil), store)
    }

    @Test func urlSessionItselfAnswersBasicThroughTheDelegate() async throws {
        let (server, _, session, _) = try scene()
        defer { server.stop(); session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(for: URLRequest(url: server.baseURL.appendingPathComponent("basic/file.txt")))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "the basic body\n")
        #expect(try await server.requestCount(for: "/basic/file.txt") == 2)
    }

    @Test func aWrongPasswordIsSentOnce() async throws {
        let (server, _, session, _) = try scene(password: "wrong")
        defer { server.stop(); session.finishTasksAndInvalidate() }
        #if canImport(FoundationNetworking)
        // corelibs: the second challenge is cancelled (default handling would hang the task).
        await #expect(throws: URLError.self) {
            try await session.data(for: URLRequest(url: server.baseURL.appendingPathComponent("basic/file.txt")))
        }
        #else
        let (_, response) = try await session.data(for: URLRequest(url: server.baseURL.appendingPathComponent("basic/file.txt")))
        #expect((response as? HTTPURLResponse)?.statusCode == 401)
        #endif
        #expect(try await server.requestCount(for: "/basic/file.txt") == 2)
    }

    @Test func digestIsAnsweredByTheBridgeOnTheDelegatesSession() async throws {
        let (server, delegate, session, _) = try scene()
        defer { server.stop(); session.finishTasksAndInvalidate() }
        let request = URLRequest(url: server.baseURL.appendingPathComponent("digest/file.txt"))
        #if canImport(FoundationNetworking)
        // corelibs never asks a delegate about a Digest-only 401: it is the response.
        let (_, unanswered) = try await session.data(for: request)
        #expect((unanswered as? HTTPURLResponse)?.statusCode == 401)
        #endif
        let (data, response) = try await session.data(for: request, credentialsFrom: delegate.storage, allowsBasicOverPlainHTTP: true)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "the digest body\n")
    }

    @Test func aDownloadIsAnsweredAndOnlyTheFinalBodyIsKept() async throws {
        let (server, delegate, session, _) = try scene()
        defer { server.stop(); session.finishTasksAndInvalidate() }
        let (file, response) = try await session.download(
            for: URLRequest(url: server.baseURL.appendingPathComponent("digest/file.txt")), credentialsFrom: delegate.storage, allowsBasicOverPlainHTTP: true)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(try String(contentsOf: file, encoding: .utf8) == "the digest body\n")
        #expect(try await server.requestCount(for: "/digest/file.txt") == 2)
    }
}

/// `bytes(for:credentialsFrom:)`: the final body streamed, challenges answered on the way.
@Suite(.serialized, .enabled(if: LighttpdServer.isInstalled, "needs lighttpd (apt-get install lighttpd)"))
struct StreamedBodyTests {
    private func collect(_ bytes: AsyncThrowingStream<UInt8, any Error>) async throws -> String {
        var data = Data()
        for try await byte in bytes { data.append(byte) }
        return String(decoding: data, as: UTF8.self)
    }

    @Test(arguments: ["basic", "digest"])
    func theAnsweredBodyIsStreamed(area: String) async throws {
        let server = try LighttpdServer(user: "alice", password: "right")
        defer { server.stop() }
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(Credential(user: "alice", password: "right", persistence: .permanent), for: ProtectionSpace(url: server.baseURL))
        let delegate = CredentialStoreSessionDelegate(storage: storage, allowsBasicOverPlainHTTP: true)
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }

        let (bytes, response) = try await session.bytes(
            for: URLRequest(url: server.baseURL.appendingPathComponent("\(area)/file.txt")), credentialsFrom: storage, allowsBasicOverPlainHTTP: true)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(try await collect(bytes) == "the \(area) body\n")
        #expect(try await server.requestCount(for: "/\(area)/file.txt") == 2)
    }

    /// Unlike `data(for:credentialsFrom:)`, which gets no body for a Basic 401 that corelibs
    /// turned into a challenge, the stream has the server's body: corelibs streams it to the
    /// delegate before it raises the challenge.
    @Test(arguments: ["digest", "basic"])
    func anUnansweredChallengeComesBackWithTheServersBody(area: String) async throws {
        let server = try LighttpdServer(user: "alice", password: "right")
        defer { server.stop() }
        let store = try TemporaryStore()

        let (bytes, response) = try await URLSession.shared.bytes(
            for: URLRequest(url: server.baseURL.appendingPathComponent("\(area)/file.txt")), credentialsFrom: try store.open())
        #expect((response as? HTTPURLResponse)?.statusCode == 401)
        #expect(try await collect(bytes).contains("401 Unauthorized"))
        #expect(try await server.requestCount(for: "/\(area)/file.txt") == 1)
    }
}

/// Uploads through the bridge: the body goes with the answered retry and a 307, not after a 303.
@Suite struct UploadBridgeTests {
    @Test(arguments: ["data", "file"])
    func theBodyIsSentAgainWithTheAnsweredRetry(source: String) async throws {
        let server = try HostileServer()
        defer { server.stop() }
        try server.route(["/up": ["challenge": [#"Digest realm="a", nonce="n1", qop="auth""#]]])
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(Credential(user: "alice", password: "right", persistence: .permanent), for: ProtectionSpace(url: server.baseURL, realm: "a"))
        var request = URLRequest(url: server.baseURL.appendingPathComponent("up"))
        request.httpMethod = "PUT"
        let body = Data("the uploaded body".utf8)

        let response: URLResponse
        if source == "data" {
            (_, response) = try await URLSession.shared.upload(for: request, from: body, credentialsFrom: storage)
        } else {
            let file = store.directory.appendingPathComponent("body.txt")
            try body.write(to: file)
            (_, response) = try await URLSession.shared.upload(for: request, fromFile: file, credentialsFrom: storage)
        }
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let requests = try server.requests()
        #expect(requests.map(\.method) == ["PUT", "PUT"])
        #expect(requests.map(\.body) == ["the uploaded body", "the uploaded body"])
        #expect(requests.last?.headers["authorization"]?.hasPrefix("Digest ") == true)
    }

    @Test func aSeeOtherDropsTheBody() async throws {
        let server = try HostileServer()
        defer { server.stop() }
        try server.route(["/up": ["redirect": ["status": 303, "location": "/done"]]])
        let store = try TemporaryStore()
        var request = URLRequest(url: server.baseURL.appendingPathComponent("up"))
        request.httpMethod = "POST"

        let (_, response) = try await URLSession.shared.upload(for: request, from: Data("form".utf8), credentialsFrom: try store.open())
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let requests = try server.requests()
        #expect(requests.map(\.method) == ["POST", "GET"])
        #expect(requests.map(\.body) == ["form", ""])
    }
}

/// `ChallengeResponse(HTTPURLResponse)` as the responder answers it: the response's URL, status and
/// challenge headers; nil for a response without a URL.
@Suite struct ResponderHTTPURLResponseTests {
    let api = URL(string: "https://api.example.com/v1/items?page=2")!
    let alice = Credential(user: "alice", password: "pw", persistence: .permanent)

    private func response(_ status: Int, _ headers: [String: String]) throws -> ChallengeResponse {
        try #require(ChallengeResponse(HTTPURLResponse(url: api, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!))
    }

    @Test func aServersChallengeIsAnsweredFromTheResponse() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(alice, for: ProtectionSpace(url: api))
        let responder = CredentialChallengeResponder(storage: storage, clientNonce: { "0a4f113b" })

        #expect(try responder.answer(to: try response(401, ["WWW-Authenticate": #"Basic realm="api""#])).disposition
                == .useCredential(alice, authorization: "Basic YWxpY2U6cHc="))
        let answer = try responder.answer(to: try response(401, ["WWW-Authenticate": #"Digest realm="api", nonce="n1", qop="auth""#]), method: "PUT")
        guard case .useCredential(_, let authorization) = answer.disposition else {
            Issue.record("Digest was not answered: \(answer.disposition)")
            return
        }
        #expect(authorization.hasPrefix("Digest "))
        #expect(authorization.contains(#"uri="/v1/items?page=2""#), "the response's URL is the request-target signed")
        #expect(answer.space?.authenticationMethod == .httpDigest)
        #expect(try responder.answer(to: try response(200, [:])).disposition == .performDefaultHandling)
    }

    @Test func aProxysChallengeNeedsTheProxyItCameThrough() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        let proxyUser = Credential(user: "proxy-user", password: "proxy-pw", persistence: .permanent)
        try storage.set(proxyUser, for: ProtectionSpace(proxy: ProxyEndpoint(host: "proxy.local", port: 3128, type: .https), realm: nil))
        let responder = CredentialChallengeResponder(storage: storage)
        let challenge = try response(407, ["Proxy-Authenticate": #"Basic realm="corp""#])

        #expect(try responder.answer(to: challenge).disposition == .performDefaultHandling)
        #expect(try responder.answer(to: challenge, proxy: ProxyEndpoint(host: "proxy.local", port: 3128, type: .https)).disposition
                == .useCredential(proxyUser, authorization: try AuthorizationValue.basic(user: "proxy-user", password: "proxy-pw")))
    }
}
