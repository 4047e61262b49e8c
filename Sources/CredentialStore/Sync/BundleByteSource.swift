/// Bytes already in memory.
final class BundleByteSource: BundleSource {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    func read(count: Int) -> [UInt8]? {
        guard count >= 0, bytes.count - offset >= count else { offset = bytes.count; return nil }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    func isAtEnd() -> Bool { offset == bytes.count }
}
