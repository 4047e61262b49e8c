import CredentialStore
import CredentialStoreNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// A local server that plays an authenticating proxy and a protected origin at once: without
/// `Proxy-Authorization` it answers 407, then without `Authorization` 401, then 200. It counts the
/// requests it judged, and whether the final one carried both answers.
final class ProxyAndOriginServer {
    private static let script = #"""
import base64, http.server, os, sys, threading
proxy = "Basic " + base64.b64encode(sys.argv[1].encode()).decode()
origin = "Basic " + base64.b64encode(sys.argv[2].encode()).decode()
count = 0
lock = threading.Lock()
class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args): pass
    def reply(self, status, body, extra=()):
        self.send_response(status)
        for name, value in extra: self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        global count
        if self.path == "/count":
            with lock: value = count
            return self.reply(200, str(value).encode())
        with lock: count += 1
        if self.headers.get("Proxy-Authorization") != proxy:
            return self.reply(407, b"proxy", [("Proxy-Authenticate", 'Basic realm="proxy-realm"')])
        if self.headers.get("Authorization") != origin:
            return self.reply(401, b"origin", [("WWW-Authenticate", 'Basic realm="origin-realm"')])
        self.reply(200, b"through both")
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Timer(60, lambda: os._exit(0)).start()
print(server.server_address[1], flush=True)
server.serve_forever()
"""#

    private let process = Process()
    let port: Int
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    init(proxy: String, origin: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", Self.script, proxy, origin]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw CredentialStorageError(.notFound, "the test server did not report a port")
        }
        self.port = port
    }

    func requestCount() async throws -> Int {
        let (data, _) = try await URLSession.shared.data(from: baseURL.appendingPathComponent("count"))
        return Int(String(decoding: data, as: UTF8.self)) ?? -1
    }

    /// SIGKILL, because a test runner may block SIGTERM.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// A proxy's 407 is answered from the proxy space and the origin's 401 from the server space, in
/// one call, each once.
@Suite(.timeLimit(.minutes(1))) struct ProxyThenOriginTests {
    @Test func aProxyChallengeAndThenAnOriginChallengeAreEachAnsweredFromTheirOwnSpace() async throws {
        let server = try ProxyAndOriginServer(proxy: "proxyuser:proxypass", origin: "alice:secret")
        defer { server.stop() }
        let store = TemporaryStore()
        let storage = try store.open()
        try storage.set(Credential(user: "proxyuser", password: "proxypass", persistence: .permanent),
                        for: ProtectionSpace(proxyHost: "127.0.0.1", port: server.port, type: .http, realm: "proxy-realm"))
        try storage.set(Credential(user: "alice", password: "secret", persistence: .permanent),
                        for: ProtectionSpace(url: server.baseURL, realm: "origin-realm"))

        let request = URLRequest(url: server.baseURL.appendingPathComponent("resource"))
        let (data, response) = try await URLSession.shared.data(
            for: request, credentialsFrom: storage, proxy: (host: "127.0.0.1", port: server.port, type: .http))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "through both")
        #expect(try await server.requestCount() == 3, "407, then 401 with the proxy's answer, then 200 with both")
    }

    @Test func aWrongProxyPasswordIsTriedOnceAndTheOriginCredentialNeverSent() async throws {
        let server = try ProxyAndOriginServer(proxy: "proxyuser:proxypass", origin: "alice:secret")
        defer { server.stop() }
        let store = TemporaryStore()
        let storage = try store.open()
        try storage.set(Credential(user: "proxyuser", password: "wrong", persistence: .permanent),
                        for: ProtectionSpace(proxyHost: "127.0.0.1", port: server.port, type: .http, realm: "proxy-realm"))
        try storage.set(Credential(user: "alice", password: "secret", persistence: .permanent),
                        for: ProtectionSpace(url: server.baseURL, realm: "origin-realm"))

        let request = URLRequest(url: server.baseURL.appendingPathComponent("resource"))
        let (_, response) = try await URLSession.shared.data(
            for: request, credentialsFrom: storage, proxy: (host: "127.0.0.1", port: server.port, type: .http))
        #expect((response as? HTTPURLResponse)?.statusCode == 407)
        #expect(try await server.requestCount() == 2)
    }
}
