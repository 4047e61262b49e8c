/// The clear part of a store's header: what every key slot is bound to.
package struct StoreHeader: Hashable, Sendable {
    /// The on-disk format this build writes; a store with a larger number is refused.
    package static let currentFormat = 1

    package var format: Int
    /// 16 random bytes naming this store; bound into every slot and, later, every bundle.
    package var storeID: [UInt8]
    /// Bumped by each rekey, so a slot wrapped for an older root key cannot be replayed.
    package var keyGeneration: Int64
    package var created: Int64

    package init(format: Int, storeID: [UInt8], keyGeneration: Int64, created: Int64) {
        self.format = format
        self.storeID = storeID
        self.keyGeneration = keyGeneration
        self.created = created
    }
}
