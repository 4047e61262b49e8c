import CredentialStore
import CredentialStoreNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CredentialStoreTestSupport
import Testing

@Suite struct EndToEndTests {
    @Test func fetchesAProtectedResourceWithTheStoredCredential() async throws {
        let server = try LocalTestServer.basicAuth(user: "alice", password: "right")
        defer { server.stop() }
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(Credential(user: "alice", password: "right", persistence: .permanent),
                        for: ProtectionSpace(url: server.baseURL, realm: "test"))

        let request = URLRequest(url: server.baseURL.appendingPathComponent("secret"))
        let (data, response) = try await URLSession.shared.data(for: request, credentialsFrom: storage, allowsBasicOverPlainHTTP: true)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "the protected body")
        #expect(try await server.requestCount() == 2)
    }

    @Test func aWrongStoredPasswordIsTriedExactlyOnce() async throws {
        let server = try LocalTestServer.basicAuth(user: "alice", password: "right")
        defer { server.stop() }
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(Credential(user: "alice", password: "wrong", persistence: .permanent),
                        for: ProtectionSpace(url: server.baseURL, realm: "test"))

        let request = URLRequest(url: server.baseURL.appendingPathComponent("secret"))
        let (_, response) = try await URLSession.shared.data(for: request, credentialsFrom: storage, allowsBasicOverPlainHTTP: true)
        #expect((response as? HTTPURLResponse)?.statusCode == 401)
        #expect(try await server.requestCount() == 2)
    }

    @Test func withNothingStoredTheChallengeIsReturned() async throws {
        let server = try LocalTestServer.basicAuth(user: "alice", password: "right")
        defer { server.stop() }
        let store = try TemporaryStore()
        let storage = try store.open()

        let request = URLRequest(url: server.baseURL.appendingPathComponent("secret"))
        let (_, response) = try await URLSession.shared.data(for: request, credentialsFrom: storage, allowsBasicOverPlainHTTP: true)
        #expect((response as? HTTPURLResponse)?.statusCode == 401)
        #expect(try await server.requestCount() == 1)
    }
}
