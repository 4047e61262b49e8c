import CredentialStore
import CredentialStoreNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import CredentialStoreTestSupport
import Testing

/// A real lighttpd (Debian's `lighttpd` package), run in the foreground by the test on 127.0.0.1,
/// protecting `/basic/` with Basic auth (realm "basic-realm", htpasswd `{SHA}` file) and `/digest/`
/// with Digest auth (realm "digest-realm", MD5, htdigest file), logging every request it serves.
final class LighttpdServer {
    static var isInstalled: Bool { Lighttpd.isInstalled }

    private let daemon: LocalDaemon
    let directory: URL
    var port: Int { daemon.port }
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    private var accessLog: URL { directory.appendingPathComponent("access.log") }

    init(user: String, password: String) throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("credstore-lighttpd-\(UUID().uuidString)", isDirectory: true)
        self.directory = directory
        let fileManager = FileManager.default
        let root = directory.appendingPathComponent("root", isDirectory: true)
        for area in ["basic", "digest"] {
            let folder = root.appendingPathComponent(area, isDirectory: true)
            try fileManager.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("the \(area) body\n".utf8).write(to: folder.appendingPathComponent("file.txt"))
        }
        let (htpasswd, htdigest) = try Lighttpd.writePasswordFiles(in: directory, user: user, password: password, digestRealm: "digest-realm")
        let accessLog = directory.appendingPathComponent("access.log")
        daemon = try Lighttpd.start(in: directory, root: root, modules: ["mod_auth", "mod_authn_file", "mod_accesslog"], rules: """
            accesslog.filename = "|exec cat >> \(accessLog.path)"
            $HTTP["url"] =~ "^/basic/" {
              auth.backend = "htpasswd"
              auth.backend.htpasswd.userfile = "\(htpasswd.path)"
              auth.require = ( "/basic/" => ("method" => "basic", "realm" => "basic-realm", "require" => "valid-user") )
            }
            $HTTP["url"] =~ "^/digest/" {
              auth.backend = "htdigest"
              auth.backend.htdigest.userfile = "\(htdigest.path)"
              auth.require = ( "/digest/" => ("method" => "digest", "realm" => "digest-realm", "algorithm" => "MD5", "require" => "valid-user") )
            }
            """)
    }

    /// How many requests for `path` lighttpd has logged. The log goes through a pipe (which
    /// lighttpd, unlike a log file, does not buffer for seconds), so it trails the responses only a
    /// little: this sends a marker request and waits (at most 5 s) until that is logged, and then
    /// everything the test sent before it is in the log too.
    func requestCount(for path: String) async throws -> Int {
        let marker = "/marker-\(UUID().uuidString)"
        _ = try await URLSession.shared.data(from: URL(string: baseURL.absoluteString + marker)!)
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            let log = (try? String(contentsOf: accessLog, encoding: .utf8)) ?? ""
            let lines = log.split(separator: "\n")
            if lines.contains(where: { $0.contains("\"GET \(marker) ") }) {
                return lines.filter { $0.contains("\"GET \(path) ") }.count
            }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        throw CredentialStorageError(.notFound, "lighttpd did not log the marker request")
    }

    func stop() { daemon.stop() }

    deinit {
        daemon.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// The FoundationNetworking bridge against a real server: lighttpd's own Basic and Digest
/// challenges, answered only from a store.
@Suite(.serialized, .enabled(if: LighttpdServer.isInstalled, "needs lighttpd (apt-get install lighttpd)"))
struct RealServerTests {
    @Test(arguments: ["basic", "digest"])
    func fetchesFromLighttpdWithTheStoredCredential(area: String) async throws {
        let server = try LighttpdServer(user: "alice", password: "right")
        defer { server.stop() }
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(Credential(user: "alice", password: "right", persistence: .permanent),
                        for: ProtectionSpace(host: "127.0.0.1", port: server.port, protocol: "http", realm: "\(area)-realm"))

        let path = "/\(area)/file.txt"
        let request = URLRequest(url: URL(string: server.baseURL.absoluteString + path)!)
        let (data, response) = try await URLSession.shared.data(for: request, credentialsFrom: storage, allowsBasicOverPlainHTTP: true)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "the \(area) body\n")
        #expect(try await server.requestCount(for: path) == 2)
    }

    @Test(arguments: ["basic", "digest"])
    func aWrongStoredPasswordGetsOneRetryAndThenTheRejection(area: String) async throws {
        let server = try LighttpdServer(user: "alice", password: "right")
        defer { server.stop() }
        let store = try TemporaryStore()
        let storage = try store.open()
        try storage.set(Credential(user: "alice", password: "wrong", persistence: .permanent),
                        for: ProtectionSpace(host: "127.0.0.1", port: server.port, protocol: "http", realm: "\(area)-realm"))

        let path = "/\(area)/file.txt"
        let request = URLRequest(url: URL(string: server.baseURL.absoluteString + path)!)
        let (data, response) = try await URLSession.shared.data(for: request, credentialsFrom: storage, allowsBasicOverPlainHTTP: true)
        #expect((response as? HTTPURLResponse)?.statusCode == 401)
        #expect(try await server.requestCount(for: path) == 2)
        // docs/challenges.md, "URLSession": corelibs hands only a Basic challenge to the session's
        // delegate, and drops its body; a Digest-only 401 keeps lighttpd's error page.
        #expect(data.isEmpty == (area == "basic"), "\(area): \(data.count) bytes")
    }
}
