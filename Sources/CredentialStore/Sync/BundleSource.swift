/// Where a bundle's bytes come from: a file read a bounded piece at a time, or bytes in memory.
protocol BundleSource: AnyObject {
    /// Exactly `count` bytes, or nil when fewer than `count` are left (then the source is spent).
    func read(count: Int) throws -> [UInt8]?
    /// Whether no byte is left.
    func isAtEnd() throws -> Bool
}
