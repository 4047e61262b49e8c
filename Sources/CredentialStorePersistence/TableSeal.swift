/// The stored table seal (see migration 0004).
package struct TableSeal: Hashable, Sendable {
    package var generation: Int64
    package var rowCount: Int64
    package var digest: [UInt8]
    package var mac: [UInt8]

    package init(generation: Int64, rowCount: Int64, digest: [UInt8], mac: [UInt8]) {
        self.generation = generation
        self.rowCount = rowCount
        self.digest = digest
        self.mac = mac
    }
}
