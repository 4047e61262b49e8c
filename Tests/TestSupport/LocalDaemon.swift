public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real server from Debian's packages (lighttpd, tinyproxy), run in the foreground by a test on
/// 127.0.0.1 and killed with SIGKILL when the value goes away.
///
/// Start-up is made robust against the two ways it failed on a loaded CI machine: the port chosen
/// beforehand can be taken by another test between the choice and the server's bind (the server
/// then exits, and a new port is tried, up to three times), and a busy machine can take seconds to
/// start a process (readiness is polled with plain TCP connects for up to 30 s). A failure says
/// what the server itself logged.
public final class LocalDaemon: @unchecked Sendable {
    /// The port the server listens on, on 127.0.0.1.
    public let port: Int
    /// The folder holding the configuration and logs; the caller owns and removes it.
    public let directory: URL
    private let process: ChildProcess

    /// Starts `executable` with `arguments(configPath)` after writing `configuration(port)` to
    /// `directory/<name>.conf`, and returns once the port accepts connections.
    ///
    /// - Parameters:
    ///   - errorLog: Where the server writes its errors, quoted when start-up fails.
    public init(
        name: String,
        executable: String,
        in directory: URL,
        errorLog: URL? = nil,
        arguments: (String) -> [String],
        configuration: (Int) -> String
    ) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("\(name).conf")
        var failures: [String] = []
        for _ in 0..<3 {
            let port = try Self.freePort()
            try Data(configuration(port).utf8).write(to: config)
            let process = try ChildProcess(URL(fileURLWithPath: executable), arguments(config.path))
            _ = process.wait(timeout: .seconds(30)) { !process.isRunning || Self.canConnect(to: port) }
            if process.isRunning, Self.canConnect(to: port) {
                self.port = port
                self.process = process
                return
            }
            process.kill()
            let log = errorLog.flatMap { try? String(contentsOf: $0, encoding: .utf8) } ?? ""
            failures.append("port \(port): \(log.split(separator: "\n").suffix(3).joined(separator: " | "))")
        }
        throw CocoaError(.fileReadUnknown, userInfo: [
            NSLocalizedDescriptionKey: "\(name) did not start: \(failures.joined(separator: "; "))",
        ])
    }

    /// Stops the server; safe to call more than once.
    public func stop() { process.kill() }

    deinit { stop() }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    public static func canConnect(to port: Int) -> Bool {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { return false }
        defer { close(socketFD) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// A port nothing listens on: bind to port 0, read the port the kernel chose, close.
    public static func freePort() throws -> Int {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw POSIXError(.EMFILE) }
        defer { close(socketFD) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketFD, $0, length) == 0 && getsockname(socketFD, $0, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
