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

/// A local HTTP server (python3's http.server) that demands Basic auth for realm "test" and counts
/// the requests it has to judge; `/count` reports that number without adding to it.
final class BasicAuthServer {
    private static let script = #"""
import base64, http.server, os, sys, threading
expected = "Basic " + base64.b64encode(sys.argv[1].encode()).decode()
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
        if self.headers.get("Authorization") == expected:
            self.reply(200, b"the protected body")
        else:
            self.reply(401, b"no", [("WWW-Authenticate", 'Basic realm="test"')])
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
# Never outlive a test run, even if the test process dies before it can kill the server.
threading.Timer(60, lambda: os._exit(0)).start()
print(server.server_address[1], flush=True)
server.serve_forever()
"""#

    private let process = Process()
    let baseURL: URL

    init(user: String, password: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", Self.script, "\(user):\(password)"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let port = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let portNumber = Int(port) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw CredentialStorageError(.notFound, "the test server did not report a port")
        }
        baseURL = URL(string: "http://127.0.0.1:\(portNumber)")!
    }

    /// The number of requests the server judged.
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

@Suite struct EndToEndTests {
    @Test func fetchesAProtectedResourceWithTheStoredCredential() async throws {
        let server = try BasicAuthServer(user: "alice", password: "right")
        defer { server.stop() }
        let store = TemporaryStore()
        let storage = try store.open()
        try storage.set(Credential(user: "alice", password: "right", persistence: .permanent),
                        for: ProtectionSpace(url: server.baseURL, realm: "test"))

        let request = URLRequest(url: server.baseURL.appendingPathComponent("secret"))
        let (data, response) = try await URLSession.shared.data(for: request, credentialsFrom: storage)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "the protected body")
        #expect(try await server.requestCount() == 2)
    }

    @Test func aWrongStoredPasswordIsTriedExactlyOnce() async throws {
        let server = try BasicAuthServer(user: "alice", password: "right")
        defer { server.stop() }
        let store = TemporaryStore()
        let storage = try store.open()
        try storage.set(Credential(user: "alice", password: "wrong", persistence: .permanent),
                        for: ProtectionSpace(url: server.baseURL, realm: "test"))

        let request = URLRequest(url: server.baseURL.appendingPathComponent("secret"))
        let (_, response) = try await URLSession.shared.data(for: request, credentialsFrom: storage)
        #expect((response as? HTTPURLResponse)?.statusCode == 401)
        #expect(try await server.requestCount() == 2)
    }

    @Test func withNothingStoredTheChallengeIsReturned() async throws {
        let server = try BasicAuthServer(user: "alice", password: "right")
        defer { server.stop() }
        let store = TemporaryStore()
        let storage = try store.open()

        let request = URLRequest(url: server.baseURL.appendingPathComponent("secret"))
        let (_, response) = try await URLSession.shared.data(for: request, credentialsFrom: storage)
        #expect((response as? HTTPURLResponse)?.statusCode == 401)
        #expect(try await server.requestCount() == 1)
    }
}
