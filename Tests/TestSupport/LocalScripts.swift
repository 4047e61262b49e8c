public import Foundation

/// The Python servers and tools (and one shell script) kept in `Tests/TestSupport/Servers`, found
/// through the source path (and left out of the build) so that no test carries a script inside a
/// Swift string.
public enum LocalScripts {
    /// The script `name` (e.g. `"hostile_server.py"`) in `Servers/`.
    public static func url(named name: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Servers", isDirectory: true).appendingPathComponent(name)
    }

    /// python3, which .ci/setup installs.
    public static let python = URL(fileURLWithPath: "/usr/bin/python3")

    /// Starts the script `name` with `arguments`; it prints the port it bound as its first line.
    /// Returns the running server and that port; throws, having killed it, when no port comes.
    public static func startServer(_ name: String, _ arguments: [String]) throws -> (server: ChildProcess, port: Int) {
        let server = try ChildProcess(python, [url(named: name).path] + arguments)
        guard let line = server.firstLine(), let port = Int(line.trimmingCharacters(in: .whitespaces)) else {
            server.kill()
            throw CocoaError(.fileReadUnknown, userInfo: [
                NSLocalizedDescriptionKey: "\(name) did not report a port: \(server.stderr.suffix(300))",
            ])
        }
        return (server, port)
    }

    /// Runs the script `name` with `arguments` to its end and returns its trimmed standard output.
    public static func output(of name: String, _ arguments: [String]) throws -> String {
        try runProcess(python, [url(named: name).path] + arguments, timeout: .seconds(60)).trimmedStdout
    }
}
