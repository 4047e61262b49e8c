package import ArgumentParser

/// A failure a command reports in one line on stderr before it exits with `exitCode`.
///
/// Commands throw it for what the library does not know about (a malformed URL, a missing
/// passphrase, nothing matched); the message says what happened and what to do, never a secret.
package struct CommandFailure: Error, CustomStringConvertible {
    package var exitCode: ExitCode
    package var message: String

    package init(_ exitCode: ExitCode, _ message: String) {
        self.exitCode = exitCode
        self.message = message
    }

    package var description: String { message }
}
