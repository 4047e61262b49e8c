public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small PKI made with the openssl CLI (shared by the TLS library's tests and the CLI's) in a temporary folder for one test: a CA, a server
/// certificate for localhost and 127.0.0.1 on the current key, the backup key (and a certificate
/// for it, for the rotation), a client certificate, and a self-signed server certificate.
///
/// Made by openssl, not by the code under test, so that what the library reads is what real
/// tools write.
public final class TestPKI: @unchecked Sendable {
    public let folder: URL

    public init() throws {
        folder = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("credstore-tls-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(Self.configuration.utf8).write(to: url("openssl.cnf"))
        let ec = ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]
        try openssl(["genpkey"] + ec + ["-out", "ca.key"])
        try openssl(["req", "-x509", "-new", "-config", "openssl.cnf", "-extensions", "ca_ext", "-key", "ca.key",
                     "-subj", "/CN=credstore test CA", "-days", "2", "-out", "ca.pem"])
        try openssl(["genpkey"] + ec + ["-out", "server.key"])
        try openssl(["genpkey"] + ec + ["-out", "backup.key"])
        try issue(key: "server.key", subject: "/CN=localhost", extensions: "server_ext", to: "server.pem")
        try issue(key: "backup.key", subject: "/CN=localhost", extensions: "server_ext", to: "backup.pem")
        // The client's key is RSA, the server's EC: both kinds go through the key handling.
        try openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "client.key"])
        try issue(key: "client.key", subject: "/CN=credstore test client", extensions: "client_ext", to: "client.pem")
        try openssl(["req", "-x509", "-new", "-config", "openssl.cnf", "-extensions", "server_ext", "-key", "server.key",
                     "-subj", "/CN=localhost", "-days", "2", "-out", "selfsigned.pem"])
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    public func url(_ name: String) -> URL { folder.appendingPathComponent(name) }

    public func text(_ name: String) throws -> String { try String(contentsOf: url(name), encoding: .utf8) }

    public func bytes(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: url(name))) }

    /// The DER of the (first) certificate in the PEM file `name`.
    public func der(_ name: String) throws -> [UInt8] {
        let out = folder.appendingPathComponent("\(name).der").path
        try openssl(["x509", "-in", name, "-outform", "der", "-out", out])
        return Array(try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    /// Runs `openssl arguments` in the folder; throws with its standard error when it fails.
    @discardableResult
    public func openssl(_ arguments: [String]) throws -> String {
        try shell(nil, executable: "/usr/bin/openssl", arguments)
    }

    /// Runs `/bin/sh -c script` in the folder, for openssl pipelines.
    @discardableResult
    public func sh(_ script: String) throws -> String {
        try shell(nil, executable: "/bin/sh", ["-c", script])
    }

    private func shell(_ stdin: String?, executable: String, _ arguments: [String]) throws -> String {
        let output = try runProcess(URL(fileURLWithPath: executable), arguments, stdin: stdin, directory: folder, timeout: .seconds(120))
        guard output.status == 0, !output.killedBySignal else {
            throw CocoaError(.fileWriteUnknown, userInfo: [
                NSLocalizedDescriptionKey: "\(arguments.first ?? executable) failed: \(output.stderr.suffix(400))",
            ])
        }
        return output.trimmedStdout
    }

    private func issue(key: String, subject: String, extensions: String, to certificate: String) throws {
        let request = certificate + ".csr"
        try openssl(["req", "-new", "-config", "openssl.cnf", "-key", key, "-subj", subject, "-out", request])
        try openssl(["x509", "-req", "-in", request, "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", "\(Int.random(in: 1000...999_999))",
                     "-days", "2", "-extfile", "openssl.cnf", "-extensions", extensions, "-out", certificate])
    }

    private static let configuration = """
        [req]
        distinguished_name = dn
        prompt = no
        [dn]
        CN = unused
        [ca_ext]
        basicConstraints = critical,CA:TRUE
        keyUsage = critical,keyCertSign,cRLSign
        subjectKeyIdentifier = hash
        [server_ext]
        basicConstraints = critical,CA:FALSE
        keyUsage = critical,digitalSignature
        extendedKeyUsage = serverAuth
        subjectAltName = DNS:localhost,IP:127.0.0.1
        subjectKeyIdentifier = hash
        [client_ext]
        basicConstraints = critical,CA:FALSE
        keyUsage = critical,digitalSignature,keyEncipherment
        extendedKeyUsage = clientAuth
        subjectKeyIdentifier = hash

        """
}

/// `openssl s_server` on 127.0.0.1, requiring a client certificate from the test CA, answering
/// every request with its status page (`-www`, HTTP 200). Killed when the value goes away.
public final class TLSTestServer: @unchecked Sendable {
    public let port: Int
    private let process: ChildProcess

    /// Starts the server with `certificate` and `key` (files of `pki`) and returns once it accepts
    /// connections; a port taken between its choice and the bind is tried again with another.
    public init(pki: TestPKI, certificate: String, key: String) throws {
        var failures: [String] = []
        for _ in 0..<3 {
            let port = try LocalDaemon.freePort()
            let process = try ChildProcess(
                URL(fileURLWithPath: "/usr/bin/openssl"),
                ["s_server", "-accept", "127.0.0.1:\(port)", "-www", "-Verify", "1", "-CAfile", "ca.pem",
                 "-cert", certificate, "-key", key],
                directory: pki.folder)
            // "ACCEPT" is printed once the socket listens; polling it spares the server a probe
            // connection that it would log as a failed handshake.
            _ = process.wait(timeout: .seconds(30)) { !process.isRunning || process.stdout.contains("ACCEPT") }
            if process.isRunning, process.stdout.contains("ACCEPT") {
                self.port = port
                self.process = process
                return
            }
            process.kill()
            failures.append("port \(port): \(process.stderr.suffix(300))")
        }
        throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "s_server did not start: \(failures)"])
    }

    public func stop() { process.kill() }

    deinit { stop() }
}
