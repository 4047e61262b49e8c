import CredentialStore
import Foundation
import CredentialStoreTestSupport
import Testing

/// A real tinyproxy (Debian's `tinyproxy` package) with BasicAuth, run in the foreground by the
/// test on 127.0.0.1. It challenges with realm "Tinyproxy" and strips `Proxy-Authorization` before
/// forwarding, so the origin never sees the proxy's credential.
final class TinyproxyServer {
    static let executable = "/usr/bin/tinyproxy"
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable) }

    private let daemon: LocalDaemon
    let directory: URL
    var port: Int { daemon.port }
    var proxyURL: String { "http://127.0.0.1:\(port)" }
    private var log: URL { directory.appendingPathComponent("tinyproxy.log") }

    /// Starts tinyproxy; without `user` it asks for no credential.
    init(user: String?, password: String) throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("credstore-tinyproxy-\(UUID().uuidString)", isDirectory: true)
        self.directory = directory
        let log = directory.appendingPathComponent("tinyproxy.log")
        daemon = try LocalDaemon(name: "tinyproxy", executable: Self.executable, in: directory, errorLog: log,
                                 arguments: { ["-d", "-c", $0] }) { port in
            """
            Port \(port)
            Listen 127.0.0.1
            Timeout 10
            Allow 127.0.0.1
            \(user.map { "BasicAuth \($0) \(password)" } ?? "")
            LogLevel Info
            MaxClients 10
            LogFile "\(log.path)"
            PidFile "\(directory.appendingPathComponent("tinyproxy.pid").path)"

            """
        }
    }

    func stop() { daemon.stop() }

    deinit {
        daemon.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// How many requests for `url` tinyproxy logged (it logs each as it reads it, before any
    /// authentication), once the count has been steady for 200 ms.
    func requestCount(for url: String) async throws -> Int {
        var last = -1
        for _ in 0..<25 {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            let count = text.split(separator: "\n").filter { $0.contains("): GET \(url) HTTP/") }.count
            if count == last { return count }
            last = count
            try await Task.sleep(nanoseconds: 200_000_000)
        }
        return last
    }
}

/// A request through a real authenticating proxy to a real protected origin: the proxy's 407 is
/// answered from the proxy space, the origin's 401 from the server space. corelibs takes the proxy
/// only from `http_proxy`, so the fetch runs in a helper process with that variable set (setting
/// it here would send every other test's requests through the proxy too).
@Suite(.serialized, .enabled(if: TinyproxyServer.isInstalled && LighttpdServer.isInstalled, "needs tinyproxy and lighttpd (run .ci/setup)"))
struct RealProxyTests {
    private struct Fetched {
        let status: Int
        /// The response's `Server` header: says which of proxy and origin answered.
        let server: String
        let body: String
    }

    /// Runs `credstore-test-helper fetch` against `url` through `proxy`.
    private func fetch(_ url: String, through proxy: TinyproxyServer, store: TemporaryStore) throws -> Fetched {
        let text = try helperFetchOutput(url, store: store, proxyEnvironment: ["http_proxy": proxy.proxyURL])
        let lines = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        let first = (lines.first ?? "").split(separator: " ", maxSplits: 1)
        return Fetched(status: Int(first.first ?? "") ?? 0, server: first.count > 1 ? String(first[1]) : "",
                       body: lines.count > 1 ? String(lines[1]) : "")
    }

    private func proxySpace(_ proxy: TinyproxyServer) -> ProtectionSpace {
        ProtectionSpace(proxy: ProxyEndpoint(host: "127.0.0.1", port: proxy.port, type: .http), realm: "Tinyproxy")
    }

    private func originSpace(_ origin: LighttpdServer) -> ProtectionSpace {
        ProtectionSpace(host: "127.0.0.1", port: origin.port, protocol: "http", realm: "basic-realm")
    }

    private static let path = "/basic/file.txt"

    /// tinyproxy (user proxyuser, password proxypass) in front of lighttpd (alice, right), and an
    /// empty store; both servers stop when the scene goes away.
    private struct Scene {
        let proxy: TinyproxyServer
        let origin: LighttpdServer
        let store: TemporaryStore
        let storage: CredentialStorage
        var url: String { origin.baseURL.absoluteString + RealProxyTests.path }

        init() throws {
            proxy = try TinyproxyServer(user: "proxyuser", password: "proxypass")
            origin = try LighttpdServer(user: "alice", password: "right")
            store = try TemporaryStore()
            storage = try store.open()
        }
    }

    @Test func theProxyAndTheOriginAreEachAnsweredFromTheirOwnSpace() async throws {
        let scene = try Scene()
        try scene.storage.set(Credential(user: "proxyuser", password: "proxypass", persistence: .permanent), for: proxySpace(scene.proxy))
        try scene.storage.set(Credential(user: "alice", password: "right", persistence: .permanent), for: originSpace(scene.origin))

        let fetched = try fetch(scene.url, through: scene.proxy, store: scene.store)
        #expect(fetched.status == 200)
        #expect(fetched.body == "the basic body\n")
        #expect(fetched.server.hasPrefix("lighttpd"))
        #expect(try await scene.origin.requestCount(for: Self.path) == 2, "the origin's 401, then its 200: both came through the proxy")
        #expect(try await scene.proxy.requestCount(for: scene.url) == 3,
                "the proxy's 407, then with its answer the origin's 401, then both answers")
    }

    @Test func aWrongProxyPasswordIsTriedOnceAndNothingReachesTheOrigin() async throws {
        let scene = try Scene()
        try scene.storage.set(Credential(user: "proxyuser", password: "wrong", persistence: .permanent), for: proxySpace(scene.proxy))
        try scene.storage.set(Credential(user: "alice", password: "right", persistence: .permanent), for: originSpace(scene.origin))

        let fetched = try fetch(scene.url, through: scene.proxy, store: scene.store)
        // tinyproxy 1.11 rejects a wrong proxy credential with a 401 of its own, challenging for
        // realm "Tinyproxy" (RFC 9110 would have a 407). No stored space matches that challenge,
        // so it is handed back as it is, and nothing is sent again.
        #expect(fetched.status == 401)
        #expect(fetched.server.hasPrefix("tinyproxy"), "the rejection comes from the proxy, not the origin")
        #expect(try await scene.proxy.requestCount(for: scene.url) == 2, "the 407, then one try")
        #expect(try await scene.origin.requestCount(for: Self.path) == 0)
    }

    @Test func theOriginsCredentialAloneDoesNotPassTheProxy() async throws {
        let scene = try Scene()
        // The same user name and password, but stored for the origin only: a proxy space is a
        // different space, so nothing answers the 407.
        try scene.storage.set(Credential(user: "proxyuser", password: "proxypass", persistence: .permanent), for: originSpace(scene.origin))

        let fetched = try fetch(scene.url, through: scene.proxy, store: scene.store)
        #expect(fetched.status == 407)
        #expect(fetched.server.hasPrefix("tinyproxy"))
        #expect(try await scene.origin.requestCount(for: Self.path) == 0)
    }
}
