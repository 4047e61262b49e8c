import CredentialStore
import CredentialStoreNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CredentialStoreTestSupport
import Testing

/// A proxy's 407 is answered from the proxy space and the origin's 401 from the server space, in
/// one call, each once.
@Suite(.timeLimit(.minutes(1))) struct ProxyThenOriginTests {
    @Test func aProxyChallengeAndThenAnOriginChallengeAreEachAnsweredFromTheirOwnSpace() async throws {
        let server = try LocalTestServer.proxyAndOrigin(proxy: "proxyuser:proxypass", origin: "alice:secret")
        defer { server.stop() }
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(Credential(user: "proxyuser", password: "proxypass", persistence: .permanent),
                        for: ProtectionSpace(proxy: ProxyEndpoint(host: "127.0.0.1", port: server.port, type: .http), realm: "proxy-realm"))
        try storage.set(Credential(user: "alice", password: "secret", persistence: .permanent),
                        for: ProtectionSpace(url: server.baseURL, realm: "origin-realm"))

        let request = URLRequest(url: server.baseURL.appendingPathComponent("resource"))
        let (data, response) = try await URLSession.shared.data(
            for: request, credentialsFrom: storage, proxy: ProxyEndpoint(host: "127.0.0.1", port: server.port, type: .http),
            allowsBasicOverPlainHTTP: true)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "through both")
        #expect(try await server.requestCount() == 3, "407, then 401 with the proxy's answer, then 200 with both")
    }

    @Test func aWrongProxyPasswordIsTriedOnceAndTheOriginCredentialNeverSent() async throws {
        let server = try LocalTestServer.proxyAndOrigin(proxy: "proxyuser:proxypass", origin: "alice:secret")
        defer { server.stop() }
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(Credential(user: "proxyuser", password: "wrong", persistence: .permanent),
                        for: ProtectionSpace(proxy: ProxyEndpoint(host: "127.0.0.1", port: server.port, type: .http), realm: "proxy-realm"))
        try storage.set(Credential(user: "alice", password: "secret", persistence: .permanent),
                        for: ProtectionSpace(url: server.baseURL, realm: "origin-realm"))

        let request = URLRequest(url: server.baseURL.appendingPathComponent("resource"))
        let (_, response) = try await URLSession.shared.data(
            for: request, credentialsFrom: storage, proxy: ProxyEndpoint(host: "127.0.0.1", port: server.port, type: .http),
            allowsBasicOverPlainHTTP: true)
        #expect((response as? HTTPURLResponse)?.statusCode == 407)
        #expect(try await server.requestCount() == 2)
    }
}
