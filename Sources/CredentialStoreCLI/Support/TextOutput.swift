/// Somewhere a command writes text: standard output, standard error, or a test's buffer.
package protocol TextOutput: Sendable {
    /// Writes `text` at once (no buffering), so a line is visible as soon as it is written.
    func write(_ text: String)
}
