import CredentialStoreCore
#if canImport(Glibc)
import CLinux
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// systemd's credential encryption (`systemd-creds encrypt|decrypt`), for a key file that opens
/// its store on one machine only: sealed with the machine's TPM2 where it has one, and with the
/// host key (`/var/lib/systemd/credential.secret`) as well or instead.
///
/// The key goes to the tool on its standard input and comes back on its standard output, read
/// into guarded memory: never in an argument, a file or the environment. The tool is looked for
/// in the system's own folders only, not on `PATH`, because whatever answers `decrypt` is handed
/// the key file's sealed contents and returns the store's key.
package struct SystemdCreds: Sendable {
    /// The tool's path; nil where systemd-creds is not installed.
    package let tool: String?

    /// The name sealed into the credential, which `decrypt` checks: a credential sealed by
    /// systemd-creds for some other service is not taken for a key file.
    static let credentialName = "credstore.key"

    /// systemd-creds from the system's folders, if it is installed.
    package static var system: SystemdCreds {
        SystemdCreds(tool: ["/usr/bin/systemd-creds", "/bin/systemd-creds", "/usr/local/bin/systemd-creds"].first { access($0, X_OK) == 0 })
    }

    package init(tool: String?) {
        self.tool = tool
    }

    /// `key`, sealed: the tool's base64 text. With a TPM2 the seal needs it and the host key
    /// (`--with-key=auto`), without one only the host key.
    package func seal(_ key: SecureBytes) throws -> [UInt8] {
        let tool = try requireTool()
        let input = key.withUnsafeBytes { Array($0) }
        var scrubbed = input
        defer { Sodium.zero(&scrubbed) }
        let result = try Self.run(tool, ["encrypt", "--name=\(Self.credentialName)", "--with-key=auto", "-", "-"], input: input)
        guard result.status == 0, !result.output.isEmpty else {
            throw Self.failure("seal the key file", result.errors)
        }
        return result.output
    }

    /// The key inside `sealed`, in guarded memory; ``CredentialStorageError/Code/wrongKey``
    /// when this machine cannot unseal it (another machine's key file, another TPM).
    package func unseal(_ sealed: [UInt8], keyBytes: Int) throws -> SecureBytes {
        let tool = try requireTool()
        let result = try Self.run(tool, ["decrypt", "--name=\(Self.credentialName)", "-", "-"], input: sealed, secretOutput: true)
        defer { if var output = result.secret { Sodium.zero(&output) } }
        guard result.status == 0, let output = result.secret else {
            let reason = Self.reason(result.errors)
            if Self.isPermissionProblem(reason) { throw Self.failure("unseal the key file", result.errors) }
            throw CredentialStorageError(.wrongKey, "the key file is sealed for another machine, or its seal is damaged; systemd-creds said: \(reason)")
        }
        guard output.count == keyBytes else {
            throw CredentialStorageError(.wrongKey, "the sealed key file does not hold a credstore key")
        }
        return try output.withUnsafeBytes { try SecureBytes(copying: $0) }
    }

    private func requireTool() throws -> String {
        guard let tool else {
            throw CredentialStorageError(.unavailable, "systemd-creds is not installed (it comes with systemd 250 and later); without it, keep the key file unsealed or use a passphrase store")
        }
        return tool
    }

    private static func isPermissionProblem(_ reason: String) -> Bool {
        reason.contains("Permission denied") || reason.contains("Operation not permitted")
    }

    /// Why the tool failed, with what usually causes it: before systemd 256 only root may read the
    /// host key, so an unprivileged user cannot seal or unseal with it.
    private static func failure(_ what: String, _ errors: [UInt8]) -> CredentialStorageError {
        let reason = reason(errors)
        if isPermissionProblem(reason) {
            return CredentialStorageError(.unavailable, "systemd-creds could not \(what): \(reason); the host key /var/lib/systemd/credential.secret is readable by root only (systemd before 256 seals for system services, not for users), so seal as root or use a passphrase store")
        }
        return CredentialStorageError(.unavailable, "systemd-creds could not \(what): \(reason)")
    }

    /// The tool's last line of complaint; the earlier ones are warnings (such as the host key
    /// not being on encrypted media).
    private static func reason(_ errors: [UInt8]) -> String {
        let lines = String(decoding: errors, as: UTF8.self).split(whereSeparator: \.isNewline)
        return lines.last.map(String.init) ?? "no reason given"
    }

    // MARK: Running the tool

    private struct Result {
        var status: Int32
        var output: [UInt8]
        var secret: [UInt8]?
        var errors: [UInt8]
    }

    /// Runs `tool` with `arguments`, writes `input` to its standard input and collects both of its
    /// outputs; with `secretOutput`, what it prints is returned in `secret` for the caller to zero.
    private static func run(_ tool: String, _ arguments: [String], input: [UInt8], secretOutput: Bool = false) throws -> Result {
        var inputPipe: [Int32] = [-1, -1], outputPipe: [Int32] = [-1, -1], errorPipe: [Int32] = [-1, -1]
        guard credstore_pipe_cloexec(&inputPipe) == 0, credstore_pipe_cloexec(&outputPipe) == 0, credstore_pipe_cloexec(&errorPipe) == 0 else {
            throw CredentialStorageError(.io, "could not start systemd-creds: \(String(cString: strerror(errno)))")
        }
        defer { for fd in inputPipe + outputPipe + errorPipe where fd >= 0 { close(fd) } }

        // What goes in is a key or a sealed key, well under a pipe's 64 KiB: written whole before
        // the tool starts, so that a tool that exits without reading it cannot raise SIGPIPE here.
        input.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(inputPipe[1], buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { break }
                offset += written
            }
        }
        close(inputPipe[1]); inputPipe[1] = -1

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inputPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errorPipe[1], 2)

        let argv: [UnsafeMutablePointer<CChar>?] = ([tool] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let environment: [UnsafeMutablePointer<CChar>?] = toolEnvironment().map { strdup($0) } + [nil]
        defer { for variable in environment { free(variable) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, tool, &actions, nil, argv, environment)
        guard spawned == 0 else {
            throw CredentialStorageError(.unavailable, "could not start \(tool): \(String(cString: strerror(spawned)))")
        }
        // Only the tool holds these ends now: its exit is the end of both outputs.
        close(inputPipe[0]); inputPipe[0] = -1
        close(outputPipe[1]); outputPipe[1] = -1
        close(errorPipe[1]); errorPipe[1] = -1

        let output = readAll(outputPipe[0])
        let errors = readAll(errorPipe[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        // WIFEXITED and WEXITSTATUS, which Swift does not import.
        let exited = status & 0x7F == 0
        let code = exited ? (status >> 8) & 0xFF : -1
        return Result(status: code, output: secretOutput ? [] : output, secret: secretOutput ? output : nil, errors: errors)
    }

    /// What the tool's environment holds: systemd's own settings (`SYSTEMD_*`: where the host
    /// key is, the log level) and a fixed PATH, and nothing else of ours — not a passphrase in
    /// `CREDSTORE_PASSPHRASE`, nor any other secret a caller keeps in its environment.
    private static func toolEnvironment() -> [String] {
        var variables: [String] = []
        var cursor = environ
        while let entry = cursor.pointee {
            variables.append(String(cString: entry))
            cursor += 1
        }
        return toolEnvironment(from: variables)
    }

    /// The tool's environment out of `variables` (`NAME=VALUE` each).
    package static func toolEnvironment(from variables: [String]) -> [String] {
        ["PATH=/usr/bin:/bin"] + variables.filter { $0.hasPrefix("SYSTEMD_") }
    }

    private static func readAll(_ fd: Int32) -> [UInt8] {
        // Room for a key up front: a secret output is never left behind in a reallocated buffer.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4096)
        var chunk = [UInt8](repeating: 0, count: 4096)
        defer { Sodium.zero(&chunk) }
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return bytes
    }
}
