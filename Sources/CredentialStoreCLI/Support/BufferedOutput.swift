/// Text gathered into 64 KiB writes: a report of many lines, written as it is made rather than
/// held whole, without a write call per line.
struct BufferedOutput {
    private let output: any TextOutput
    private var buffer = ""

    init(_ output: any TextOutput) {
        self.output = output
    }

    mutating func write(_ text: String) {
        buffer += text
        if buffer.utf8.count >= 64 * 1024 { flush() }
    }

    mutating func flush() {
        guard !buffer.isEmpty else { return }
        output.write(buffer)
        buffer = ""
    }
}
