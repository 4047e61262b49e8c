import CredentialStore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A store in a fresh temporary folder, removed when the value goes away, so tests never share one.
final class TemporaryStore {
    let directory: URL

    init() {
        directory = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("credstore-networking-tests-\(UUID().uuidString)", isDirectory: true)
    }

    var database: URL { directory.appendingPathComponent("store/credentials.db") }
    var keyFile: URL { directory.appendingPathComponent("store/store.key") }

    /// Opens (creating on first use) the store with its key file.
    func open() throws -> CredentialStorage {
        try CredentialStorage(at: database, key: .keyFile(keyFile))
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A local HTTP server (python3's http.server on 127.0.0.1) that judges each request with a
/// python `judge(request)` function given by the test, and counts the requests it judged;
/// `/count` reports that number without adding to it. It exits by itself after 10 minutes, so it
/// never outlives a test run by long, and ``stop()`` kills it with SIGKILL (a test runner may block
/// SIGTERM). Not sooner: on a 2-core machine the whole suite's other tests can hold a test's
/// requests back for more than a minute, and a server gone by then fails them for nothing.
final class LocalTestServer {
    private static let scaffolding = #"""
import base64, http.server, os, sys, threading
count = 0
lock = threading.Lock()
def basic(credentials): return "Basic " + base64.b64encode(credentials.encode()).decode()
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
        judge(self)
"""#

    private static let serve = #"""
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Timer(600, lambda: os._exit(0)).start()
print(server.server_address[1], flush=True)
server.serve_forever()
"""#

    private let process = Process()
    let port: Int
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Starts the server; `judge` is python defining `judge(request)`, which reads
    /// `request.headers` and calls `request.reply(status, body, headers)`; `arguments` reach it as
    /// `sys.argv[1...]`.
    init(judge: String, arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", [Self.scaffolding, judge, Self.serve].joined(separator: "\n")] + arguments
        port = try startReportingPort(process, server: "the test server")
    }

    /// The number of requests the server judged.
    func requestCount() async throws -> Int {
        let (data, _) = try await URLSession.shared.data(from: baseURL.appendingPathComponent("count"))
        return Int(String(decoding: data, as: UTF8.self)) ?? -1
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// Starts `process`, a server that prints the port it bound as its first line, and returns that
/// port; kills the process when no port comes.
func startReportingPort(_ process: Process, server: String) throws -> Int {
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
        throw CredentialStorageError(.notFound, "\(server) did not report a port")
    }
    return port
}
