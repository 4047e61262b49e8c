/// One entry of the change log that lets other processes announce what this one committed.
package struct SealedChangeEntry: Hashable, Sendable {
    package var sequence: Int64
    /// The store instance that committed it.
    package var writer: [UInt8]
    package var processID: Int32
    /// The kind, tier, space and user of each change, in order, sealed together.
    package var sealedChanges: [UInt8]
}
