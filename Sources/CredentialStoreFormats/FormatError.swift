/// A file or a message that does not follow its format: a netrc file, a password manager's
/// export, a line git would misread.
///
/// Thrown before anything is written, so that a malformed input changes nothing; the message names
/// the line and what is wrong with it, never a value from it.
package struct FormatError: Error, CustomStringConvertible, Sendable {
    /// What is wrong, and where, in words for the user.
    package var message: String

    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}
