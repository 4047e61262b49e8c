import CredentialStoreTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What one run of the `credstore` binary did.
struct RunResult {
    var status: Int32
    var stdout: String
    var stderr: String

    /// The one-line error contract: `credstore: …`, one line, nothing else on stderr.
    var stderrIsOneErrorLine: Bool {
        stderr.hasPrefix("credstore: ") && stderr.hasSuffix("\n") && stderr.dropLast().allSatisfy { $0 != "\n" }
    }
}

/// A temporary directory of its own for one test: a home, an XDG data folder and a store, so that
/// nothing touches the real home. Runs the built `credstore` binary inside it.
final class Sandbox {
    /// The `credstore` built beside this test bundle, or the one `CREDSTORE_CLI_UNDER_TEST` names:
    /// CI runs these tests a second time against the static release binary, as it is shipped.
    static let binary = ProcessInfo.processInfo.environment["CREDSTORE_CLI_UNDER_TEST"].map { URL(fileURLWithPath: $0) }
        ?? URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("credstore")

    let root: URL
    /// `--store` for commands that name the store explicitly.
    let store: URL
    /// The child's environment: HOME and XDG_DATA_HOME inside the sandbox, nothing of ours.
    var environment: [String: String]

    init() throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("credstore-cli-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        store = root.appendingPathComponent("store/credentials.db")
        environment = [
            "PATH": "/usr/bin:/bin",
            "HOME": root.appendingPathComponent("home").path,
            "XDG_DATA_HOME": root.appendingPathComponent("data").path,
            "LANG": "C.UTF-8",
        ]
    }

    deinit {
        try? FileManager.default.removeItem(at: root)
    }

    /// The store path of the embedded default (`$XDG_DATA_HOME/credstore/credentials.db`).
    var defaultStore: URL { root.appendingPathComponent("data/credstore/credentials.db") }

    /// `--store PATH` for `store`.
    var storeArguments: [String] { ["--store", store.path] }

    /// Runs `credstore arguments`, with `stdin` as its standard input (none: /dev/null).
    @discardableResult
    func run(_ arguments: [String], stdin: String? = nil, environment extra: [String: String] = [:]) throws -> RunResult {
        try runProgram(Self.binary, arguments, stdin: stdin, environment: extra)
    }

    /// Runs another program (credstore, git, curl) with `stdin` (none: /dev/null), in the sandbox's
    /// environment plus `extra`; a death by signal fails the test.
    func runProgram(_ executable: URL, _ arguments: [String], stdin: String? = nil,
                    environment extra: [String: String] = [:]) throws -> RunResult {
        let result = try runProcess(executable, arguments, stdin: stdin, environment: environment.merging(extra) { _, new in new })
        #expect(!result.killedBySignal, "\(executable.lastPathComponent) \(arguments) died of a signal")
        return RunResult(status: result.status, stdout: result.stdout, stderr: result.stderr)
    }

    /// `credstore add URL --user USER …` with the password on stdin; expects success.
    func add(_ url: String, user: String, password: String, _ more: [String] = []) throws {
        let result = try run(["add", url, "--user", user] + more + storeArguments, stdin: password + "\n")
        #expect(result.status == 0, "add failed: \(result.stderr)")
    }

    /// Runs `sqlite3 DB SQL` on the store, as an attacker or a disk fault would change it.
    func sqlite(_ sql: String, database: URL? = nil) throws {
        let result = try runProcess(URL(fileURLWithPath: "/usr/bin/sqlite3"), [(database ?? store).path, sql])
        #expect(result.status == 0 && !result.killedBySignal, "sqlite3 failed: \(result.stderr)")
    }

    /// The permission bits of `url`.
    func mode(of url: URL) -> mode_t {
        // FileManager rather than stat(2): which module declares `struct stat` for Swift depends on
        // the modules in the build, and swift-nio's make it another one.
        let permissions = (try? FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions]) as? NSNumber
        return mode_t(permissions?.uint32Value ?? 0) & 0o777
    }
}

/// Parses JSON output for assertions.
func jsonObject(_ text: String) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
}

/// Parses a JSON array of objects for assertions.
func jsonArray(_ text: String) throws -> [[String: Any]] {
    try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
}

/// The top-level keys of a one-line JSON object, in the order written.
func keyOrder(_ json: Substring) -> [String] {
    // Depth-1 keys: a quoted string directly after "{" or "," at nesting depth 1, followed by ":".
    var keys: [String] = []
    var depth = 0
    var inString = false
    var escaped = false
    var current = ""
    var expectingKey = false
    for character in json {
        if inString {
            if escaped { escaped = false; current.append(character); continue }
            if character == "\\" { escaped = true; continue }
            if character == "\"" {
                inString = false
                if expectingKey, depth == 1 { keys.append(current) }
                expectingKey = false
                continue
            }
            current.append(character)
            continue
        }
        switch character {
        case "\"": inString = true; current = ""
        case "{", "[": depth += 1; expectingKey = character == "{" && depth == 1
        case "}", "]": depth -= 1
        case ",": expectingKey = depth == 1
        default: break
        }
    }
    return keys
}
