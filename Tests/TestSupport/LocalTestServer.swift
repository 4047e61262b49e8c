public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Servers/judged_server.py` on 127.0.0.1: answers every request with one of its judges, and
/// counts the requests it judged. Killed (SIGKILL) by ``stop()`` or when the value goes away.
public final class LocalTestServer: @unchecked Sendable {
    private let server: ChildProcess
    /// The port the server bound on 127.0.0.1.
    public let port: Int
    /// `http://127.0.0.1:PORT`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    private init(judge: String, arguments: [String]) throws {
        (server, port) = try LocalScripts.startServer("judged_server.py", [judge] + arguments)
    }

    /// Demands Basic auth for realm "test" from `user` and `password`.
    public static func basicAuth(user: String, password: String) throws -> LocalTestServer {
        try LocalTestServer(judge: "basic-auth", arguments: ["\(user):\(password)"])
    }

    /// Plays an authenticating proxy and a protected origin at once: without the proxy's
    /// `Proxy-Authorization` it answers 407, then without the origin's `Authorization` 401, then 200.
    /// Both are `user:password`.
    public static func proxyAndOrigin(proxy: String, origin: String) throws -> LocalTestServer {
        try LocalTestServer(judge: "proxy-and-origin", arguments: [proxy, origin])
    }

    /// The number of requests the server judged.
    public func requestCount() async throws -> Int {
        let (data, _) = try await URLSession.shared.data(from: baseURL.appendingPathComponent("count"))
        return Int(String(decoding: data, as: UTF8.self)) ?? -1
    }

    /// Kills the server; safe to call more than once.
    public func stop() { server.kill() }

    deinit { stop() }
}
