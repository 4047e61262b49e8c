public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How one run of a program ended, and what it wrote.
public struct ProcessOutput: Sendable {
    /// The exit status, or the signal's number when ``killedBySignal``.
    public var status: Int32
    /// Whether a signal ended the program (a crash, or a kill by the test or the timeout).
    public var killedBySignal: Bool
    /// Everything the program wrote to standard output.
    public var stdout: String
    /// Everything the program wrote to standard error.
    public var stderr: String

    /// `stdout` without the white space and line ends around it.
    public var trimmedStdout: String { stdout.trimmingCharacters(in: .whitespacesAndNewlines) }
}

/// A program the tests start: the one place they run another process.
///
/// Standard output and error go to files, not pipes, so a chatty child never blocks on a full
/// pipe the test is not reading, and a test can read what a still-running child wrote (a server's
/// port, a watcher's lines). The child is killed with SIGKILL when the value goes away: a test
/// runner may hand its children a mask that blocks SIGTERM.
public final class ChildProcess: @unchecked Sendable {
    private let process = Process()
    private let folder: URL
    private let outputURL: URL
    private let errorURL: URL

    /// Starts `executable arguments`.
    ///
    /// - Parameters:
    ///   - stdin: What the child reads on standard input; nil is /dev/null.
    ///   - environment: The child's whole environment; nil inherits the test's.
    ///   - directory: The child's working directory; nil inherits the test's.
    public init(
        _ executable: URL, _ arguments: [String], stdin: String? = nil,
        environment: [String: String]? = nil, directory: URL? = nil
    ) throws {
        folder = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("credstore-process-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        outputURL = folder.appendingPathComponent("stdout")
        errorURL = folder.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = directory }
        if let stdin {
            let inputURL = folder.appendingPathComponent("stdin")
            try Data(stdin.utf8).write(to: inputURL)
            process.standardInput = try FileHandle(forReadingFrom: inputURL)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorURL)
        try process.run()
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: folder)
    }

    /// The child's pid, for /proc and signals.
    public var processIdentifier: Int32 { process.processIdentifier }
    /// Whether the child has not exited yet.
    public var isRunning: Bool { process.isRunning }

    /// What the child wrote to standard output so far.
    public var stdout: String { String(decoding: (try? Data(contentsOf: outputURL)) ?? Data(), as: UTF8.self) }
    /// What the child wrote to standard error so far.
    public var stderr: String { String(decoding: (try? Data(contentsOf: errorURL)) ?? Data(), as: UTF8.self) }

    /// Sends `signal` if the child still runs.
    public func send(_ signal: Int32) {
        if process.isRunning { Glibc.kill(process.processIdentifier, signal) }
    }

    /// Kills the child (SIGKILL) and reaps it; safe to call more than once.
    public func kill() {
        send(SIGKILL)
        process.waitUntilExit()
    }

    /// Waits until `condition` holds, polling; false when `timeout` passed first.
    public func wait(timeout: Duration = .seconds(10), until condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            usleep(20_000)
        }
        return true
    }

    /// The first line the child prints, once it is whole; nil when the child exits or `timeout`
    /// passes first (a server that reports the port it bound, for one).
    public func firstLine(timeout: Duration = .seconds(30)) -> String? {
        var line: String?
        _ = wait(timeout: timeout) {
            let text = stdout
            if let end = text.firstIndex(of: "\n") {
                line = String(text[..<end])
                return true
            }
            return !process.isRunning
        }
        return line
    }

    /// Waits for the child to exit, killing it once `timeout` has passed, and returns how it ended.
    @discardableResult
    public func wait(timeout: Duration = .seconds(300)) -> ProcessOutput {
        if !wait(timeout: timeout, until: { !process.isRunning }) { kill() }
        process.waitUntilExit()
        return ProcessOutput(
            status: process.terminationStatus, killedBySignal: process.terminationReason == .uncaughtSignal,
            stdout: stdout, stderr: stderr)
    }
}

/// Runs `executable arguments` to its end (killed after `timeout`) and returns how it ended.
public func runProcess(
    _ executable: URL, _ arguments: [String], stdin: String? = nil, environment: [String: String]? = nil,
    directory: URL? = nil, timeout: Duration = .seconds(300)
) throws -> ProcessOutput {
    try ChildProcess(executable, arguments, stdin: stdin, environment: environment, directory: directory).wait(timeout: timeout)
}

/// The executables SwiftPM builds beside the test bundle (`credstore`, `credstore-test-helper`,
/// `credstore-fuzz`).
public func builtExecutable(_ name: String) -> URL {
    URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent(name)
}
