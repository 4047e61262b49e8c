import CredentialStore
import Foundation
import CredentialStoreTestSupport
import Testing

/// The program of `Harnesses/NewUser`, a package outside this one that
/// depends on it by path, built by `.ci/new-user` (which sets `CREDSTORE_NEW_USER_EXECUTABLE`):
/// credentials stored without a realm answer lighttpd's Basic 401 through the public delegate, and
/// its Digest 401 and tinyproxy's 407 through the public bridge on the same session.
/// The new user's program, as `.ci/new-user` built it.
private let newUserExecutable = ProcessInfo.processInfo.environment["CREDSTORE_NEW_USER_EXECUTABLE"].map { URL(fileURLWithPath: $0) }

@Suite(.serialized, .enabled(if: newUserExecutable != nil && LighttpdServer.isInstalled && TinyproxyServer.isInstalled,
                             "run .ci/new-user, which builds Harnesses/NewUser (and needs lighttpd and tinyproxy)"))
struct NewUserPackageTests {

    /// Runs the new user's program with exactly `proxyEnvironment` as its proxy variables; the
    /// passwords go on standard input.
    private func run(_ arguments: [String], passwords: [String], proxyEnvironment: [String: String] = [:]) throws -> [String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.lowercased().hasSuffix("_proxy") }
        environment.merge(proxyEnvironment) { $1 }
        let result = try runProcess(try #require(newUserExecutable), arguments,
                                    stdin: passwords.map { $0 + "\n" }.joined(), environment: environment, timeout: .seconds(120))
        #expect(result.status == 0 && !result.killedBySignal, "the new user's program failed: \(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test func anOriginsCredentialWithoutARealmAnswersBasicAndDigest() async throws {
        let server = try LighttpdServer(user: "alice", password: "right")
        defer { server.stop() }
        let store = try TemporaryStore()

        let lines = try run([store.directory.path, server.baseURL.absoluteString], passwords: ["alice:right"])
        #expect(lines == ["/basic/file.txt 200 the basic body", "/digest/file.txt 200 the digest body"])
        #expect(try await server.requestCount(for: "/basic/file.txt") == 2, "the 401, then the answer")
        #expect(try await server.requestCount(for: "/digest/file.txt") == 2, "the 401, then the answer")
    }

    @Test func aProxysCredentialWithoutARealmAnswersTinyproxy() async throws {
        let proxy = try TinyproxyServer(user: "proxyuser", password: "proxypass")
        let origin = try LighttpdServer(user: "alice", password: "right")
        defer { proxy.stop(); origin.stop() }
        let store = try TemporaryStore()
        let url = origin.baseURL.absoluteString + "/basic/file.txt"

        let lines = try run([store.directory.path, origin.baseURL.absoluteString, "127.0.0.1:\(proxy.port)"],
                            passwords: ["alice:right", "proxyuser:proxypass"], proxyEnvironment: ["http_proxy": proxy.proxyURL])
        #expect(lines == ["/basic/file.txt 200 the basic body"])
        #expect(try await proxy.requestCount(for: url) == 3, "the proxy's 407, then the origin's 401, then both answers")
        #expect(try await origin.requestCount(for: "/basic/file.txt") == 2)
    }
}
