/// A file that could not be read (an I/O error, not its format): the CLI's exit 74, where a
/// ``FormatError`` is 65.
package struct ReadError: Error, CustomStringConvertible, Sendable {
    /// What could not be read, and why, in words for the user.
    package var message: String

    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}
