#if canImport(Glibc)
import Glibc
#endif

/// What a command talks to: the environment, its output streams and its secret input.
///
/// Commands read ``current`` rather than the process's globals, so tests run them in-process with
/// their own environment and buffers.
package struct Console: Sendable {
    /// The environment variables (`CREDSTORE_STORE`, `CREDSTORE_PASSPHRASE`, `XDG_DATA_HOME` …).
    package var environment: [String: String]
    /// Standard output: results.
    package var output: any TextOutput
    /// Standard error: the one-line error, prompts' companions, status lines.
    package var errors: any TextOutput
    /// Standard input and the terminal, for passwords and passphrases.
    package var secrets: any SecretInput

    /// Creates a console.
    package init(environment: [String: String], output: any TextOutput, errors: any TextOutput, secrets: any SecretInput) {
        self.environment = environment
        self.output = output
        self.errors = errors
        self.secrets = secrets
    }

    /// The process's own environment, standard streams and terminal.
    package static var standard: Console {
        Console(
            environment: processEnvironment(),
            output: FileDescriptorOutput(fileDescriptor: 1),
            errors: FileDescriptorOutput(fileDescriptor: 2),
            secrets: TerminalInput())
    }

    /// The console commands run against; bind another with `Console.$current.withValue(_:operation:)`.
    @TaskLocal package static var current: Console = .standard

    /// The process's environment, read from `environ`: `ProcessInfo` would first start
    /// Foundation's CoreFoundation layer, a third of a millisecond that `credstore get` needs for
    /// nothing else.
    private static func processEnvironment() -> [String: String] {
        var variables: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            // Split by Unicode scalars, as the C library splits bytes: a value that starts with a
            // combining mark makes `=` and the mark one Character, which equals no `=`.
            let text = String(cString: pointer).unicodeScalars
            // The first entry of a name wins, as getenv(3) finds it: a wrapper that checked a
            // variable with getenv reads what credstore reads.
            if let separator = text.firstIndex(of: "=") {
                let name = String(Substring(text[..<separator]))
                if variables[name] == nil { variables[name] = String(Substring(text[text.index(after: separator)...])) }
            }
            entry += 1
        }
        return variables
    }

    /// The value of environment variable `name`, treating an empty value as unset.
    func variable(_ name: String) -> String? {
        guard let value = environment[name], !value.isEmpty else { return nil }
        return value
    }
}
