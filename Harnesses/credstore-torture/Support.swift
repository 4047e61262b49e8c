import CredentialStore
import Foundation
import SeededRandom
#if canImport(Glibc)
import Glibc
#endif

/// Writes to stderr at once.
func note(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Writes a line to stdout with one write(2), so it is out of the process before the next step.
func emit(_ text: String) {
    let line = Array((text + "\n").utf8)
    var offset = 0
    while offset < line.count {
        let written = line[offset...].withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        if written <= 0 {
            if errno == EINTR { continue }
            return
        }
        offset += written
    }
}

func fail(_ message: String) -> Never {
    note("credstore-torture: \(message)")
    exit(2)
}

/// Command-line options as `--name value` pairs after the subcommand.
struct Options {
    var values: [String: String] = [:]
    var positional: [String] = []

    init(_ arguments: ArraySlice<String>) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            if argument.hasPrefix("--") {
                values[String(argument.dropFirst(2))] = iterator.next() ?? ""
            } else {
                positional.append(argument)
            }
        }
    }

    func int(_ name: String, default value: Int) -> Int {
        guard let text = values[name] else { return value }
        guard let number = Int(text) else { fail("--\(name) needs a number, not \(text)") }
        return number
    }

    func double(_ name: String, default value: Double) -> Double {
        guard let text = values[name] else { return value }
        guard let number = Double(text) else { fail("--\(name) needs a number, not \(text)") }
        return number
    }

    func seed() -> UInt64 {
        if let text = values["seed"] {
            guard let number = UInt64(text) else { fail("--seed needs an unsigned number, not \(text)") }
            return number
        }
        return UInt64(Date().timeIntervalSince1970 * 1000) & 0xFFFF_FFFF
    }

    subscript(name: String) -> String? { values[name] }
}

/// The running executable, to start copies of itself as children.
func selfExecutable() -> URL {
    if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
        return URL(fileURLWithPath: path)
    }
    return URL(fileURLWithPath: CommandLine.arguments[0])
}

/// A fresh 0700 folder.
func makeDirectory(_ url: URL) {
    try? FileManager.default.removeItem(at: url)
    do {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: url.path)
    } catch {
        fail("cannot create \(url.path): \(error)")
    }
}

/// Copies the files of a store (database, -wal, -shm, key file) from one folder to another, 0600.
func copyStoreFiles(names: [String], from source: URL, to target: URL) {
    makeDirectory(target)
    for name in names {
        let from = source.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: from.path) else { continue }
        let to = target.appendingPathComponent(name)
        do {
            try FileManager.default.copyItem(at: from, to: to)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: to.path)
        } catch {
            fail("cannot copy \(from.path): \(error)")
        }
    }
}

/// A child process whose stdout and stderr go to files.
final class Child {
    let process = Process()
    let outputURL: URL
    let errorURL: URL
    let started: Date

    init(executable: URL, arguments: [String], environment: [String: String] = [:], output: URL, error: URL? = nil) {
        outputURL = output
        errorURL = error ?? output.appendingPathExtension("err")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil, attributes: [.posixPermissions: 0o600])
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil, attributes: [.posixPermissions: 0o600])
        process.executableURL = executable
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        for (name, value) in environment { merged[name] = value }
        process.environment = merged
        process.standardInput = FileHandle.nullDevice
        guard let out = FileHandle(forWritingAtPath: outputURL.path), let err = FileHandle(forWritingAtPath: errorURL.path) else {
            fail("cannot open \(outputURL.path)")
        }
        process.standardOutput = out
        process.standardError = err
        do {
            try process.run()
        } catch {
            fail("cannot start \(executable.path): \(error)")
        }
        started = Date()
        try? out.close()
        try? err.close()
    }

    var pid: pid_t { process.processIdentifier }

    /// SIGKILLs the child; returns whether it was still running (a real kill).
    @discardableResult
    func killNow() -> Bool {
        let alive = process.isRunning
        if alive { kill(pid, SIGKILL) }
        process.waitUntilExit()
        // A kill that raced with a normal exit is not a kill.
        return alive && process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
    }

    /// Waits at most `seconds`; on timeout kills and returns nil.
    func wait(seconds: Double) -> (reason: Process.TerminationReason, status: Int32)? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning {
            if Date() > deadline {
                kill(pid, SIGKILL)
                process.waitUntilExit()
                return nil
            }
            usleep(2000)
        }
        process.waitUntilExit()
        return (process.terminationReason, process.terminationStatus)
    }

    var output: String { (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "" }
    var errors: String { (try? String(contentsOf: errorURL, encoding: .utf8)) ?? "" }
}

/// Runs a program to completion and returns its exit status and output.
func runToEnd(_ executable: URL, _ arguments: [String], environment: [String: String] = [:], in directory: URL,
         timeout: Double = 300) -> (status: Int32, signaled: Bool, output: String, errors: String) {
    let child = Child(executable: executable, arguments: arguments, environment: environment,
                      output: directory.appendingPathComponent("run-\(UUID().uuidString).out"))
    defer {
        try? FileManager.default.removeItem(at: child.outputURL)
        try? FileManager.default.removeItem(at: child.errorURL)
    }
    guard let result = child.wait(seconds: timeout) else {
        return (-1, true, child.output, "timed out after \(timeout) s\n" + child.errors)
    }
    return (result.status, result.reason == .uncaughtSignal, child.output, child.errors)
}

func sleepSeconds(_ seconds: Double) {
    guard seconds > 0 else { return }
    usleep(useconds_t(seconds * 1_000_000))
}

/// The error's code, or a description for an error that is not a `CredentialStorageError`.
func describe(_ error: any Error) -> String {
    if let error = error as? CredentialStorageError { return "\(error.code): \(error.message)" }
    return "untyped \(type(of: error)): \(error)"
}

/// Opens a store, retrying for a short while when another process holds it mid-creation.
func openStore(_ database: URL, key: StoreKey) throws -> CredentialStorage {
    try CredentialStorage(at: database, key: key)
}

/// A store's key, as children receive it: a key-file path argument, or a passphrase in the
/// environment (`TORTURE_PASSPHRASE`), never in argv.
func storeKey(keyFile: String) -> StoreKey {
    if keyFile == "-" {
        guard let passphrase = ProcessInfo.processInfo.environment["TORTURE_PASSPHRASE"] else {
            fail("a passphrase store needs TORTURE_PASSPHRASE")
        }
        return .passphrase(passphrase)
    }
    return .keyFile(URL(fileURLWithPath: keyFile))
}

/// Pads a table column.
func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}
