/// Where secrets come from: standard input or a no-echo prompt on the terminal.
package protocol SecretInput: Sendable {
    /// Whether standard input is a terminal, so that a secret is asked for at a prompt.
    var isTerminal: Bool { get }
    /// Reads one line of standard input without its newline; nil at end of input.
    func readLine() throws -> String?
    /// Shows `prompt` on the terminal and reads one line without echoing it; nil at end of input.
    func readSecret(prompt: String) throws -> String?
}
