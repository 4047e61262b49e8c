import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import Synchronization

/// How a lookup checks its answer against the seal tree (``SealTree``), and what one store
/// instance remembers of what it has checked.
///
/// A lookup reads its rows, the seal, and the bucket and interior nodes on its leaves' paths in
/// one snapshot, and hands them here: the leaves' digests computed from the rows must be what the
/// buckets record (a leaf with no rows must be absent), each bucket's hash must be its slot in its
/// parent, and so on to the root under the seal's MAC.
///
/// The interior nodes change only when the seal does; an instance keeps the bodies it has checked
/// under the seal it checked them against, so a later lookup under the same seal compares bytes
/// instead of hashing them again. The seal itself is compared byte for byte with the one last
/// checked, and a new one is authenticated; a seal whose generation is lower than one this
/// instance has seen is a rollback of the store while it was open.
final class SealChecks: Sendable {
    private struct State {
        var seal: TableSeal?
        /// Interior nodes checked under `seal`, by id; an empty array for an absent node.
        var interior: [Int64: [UInt8]] = [:]
        var highestGeneration: Int64 = 0
    }

    private let state: Mutex<State>
    let storeID: [UInt8]

    init(storeID: [UInt8], generation: Int64?) {
        self.storeID = storeID
        state = Mutex(State(highestGeneration: generation ?? 0))
    }

    /// What a lookup claims of one leaf: its state, computed from the rows it read.
    struct Claim {
        var leaf: SealTree.Leaf
        var state: SealTree.LeafState
    }

    /// The claim of a space's leaf: its credential rows and its default choice.
    static func spaceClaim(_ spaceIndex: BlindIndex, _ space: SealedSpace, keys: StoreKeyring) -> Claim {
        let leaf = SealTree.Leaf(kind: .space, group: spaceIndex.bytes)
        var rows = space.credentials.map(SealedRowFingerprint.init)
        if let choice = space.defaultChoice { rows.append(SealedRowFingerprint(choice)) }
        return Claim(leaf: leaf, state: SealTree.state(of: leaf, rows: rows, keys: keys))
    }

    /// The claim of an origin's leaf: every credential row on it.
    static func originClaim(_ originIndex: BlindIndex, _ rows: [SealedCredential], keys: StoreKeyring) -> Claim {
        let leaf = SealTree.Leaf(kind: .origin, group: originIndex.bytes)
        return Claim(leaf: leaf, state: SealTree.state(of: leaf, rows: rows.map(SealedRowFingerprint.init), keys: keys))
    }

    /// The claim of the trusted devices' leaf: every one of them.
    static func trustedDevicesClaim(_ trusted: [(keyIndex: BlindIndex, sealedPublicKey: [UInt8])], keys: StoreKeyring) -> Claim {
        let leaf = SealTree.Leaf(kind: .trustedDevices, group: [])
        let rows = trusted.map { SealedRowFingerprint(trustedKeyIndex: $0.keyIndex, sealedPublicKey: $0.sealedPublicKey) }
        return Claim(leaf: leaf, state: SealTree.state(of: leaf, rows: rows, keys: keys))
    }

    /// The claim of the one-row tables' leaf: the device identity and the sync clock.
    static func singletonsClaim(device: SealedDevice?, clock: (wall: Int64, counter: Int64)?, keys: StoreKeyring) -> Claim {
        let leaf = SealTree.Leaf(kind: .singletons, group: [])
        var rows: [SealedRowFingerprint] = []
        if let device { rows.append(SealedRowFingerprint(device)) }
        if let clock { rows.append(SealedRowFingerprint(syncClockWall: clock.wall, counter: clock.counter)) }
        return Claim(leaf: leaf, state: SealTree.state(of: leaf, rows: rows, keys: keys))
    }

    /// The ids of the nodes a lookup of `leaves` must read: each bucket and the nodes above it.
    static func nodeIDs(for leaves: [SealTree.Leaf]) -> [Int64] {
        var ids: [Int64] = []
        for leaf in leaves {
            for id in SealTree.path(toBucket: leaf.bucket) where !ids.contains(id) { ids.append(id) }
        }
        return ids
    }

    /// Checks `claims` against the tree: `seal` and `nodes` must come from the snapshot the
    /// claims' rows were read in. Throws `tamperDetected` when any does not hold.
    func check(_ claims: [Claim], seal: TableSeal?, nodes: [Int64: [UInt8]], keys: StoreKeyring) throws {
        try state.withLock { state in
            if state.seal != seal {
                let seal = try TableSealing.authenticated(seal, keys: keys, storeID: storeID)
                guard seal.generation >= state.highestGeneration else {
                    throw TableSealing.tampered(
                        "the seal went back from generation \(state.highestGeneration) to \(seal.generation) while the store was open")
                }
                state.seal = seal
                state.interior = [:]
                state.highestGeneration = seal.generation
            }
            let root = state.seal!.digest
            for claim in claims {
                let path = SealTree.path(toBucket: claim.leaf.bucket)
                let bucketID = path[SealTree.bucketLevel]
                let bucket = nodes[bucketID]
                guard let entries = SealTree.decodeBucket(bucket) else { throw SealTree.tampered("a bucket of the seal tree does not parse") }
                let recorded = SealTree.recorded(claim.leaf, in: entries)
                guard recorded.count == claim.state.count, Sodium.constantTimeEquals(recorded.digest, claim.state.digest) else {
                    throw TableSealing.tampered("the rows differ from those sealed")
                }
                // Down from the root: each node's hash must be its slot in the checked parent.
                var expected = root
                for id in path {
                    let body = nodes[id]
                    if SealTree.level(of: id) < SealTree.bucketLevel, let known = state.interior[id], known == (body ?? []) {
                        expected = Array(SealTree.slot(SealTree.parent(of: path[SealTree.level(of: id) + 1]).slot, of: body))
                        continue
                    }
                    guard Sodium.constantTimeEquals(SealTree.hash(node: id, body: body, keys: keys), expected) else {
                        throw SealTree.tampered("a node of the seal tree does not match its parent")
                    }
                    guard SealTree.level(of: id) < SealTree.bucketLevel else { break }
                    state.interior[id] = body ?? []
                    expected = Array(SealTree.slot(SealTree.parent(of: path[SealTree.level(of: id) + 1]).slot, of: body))
                }
            }
        }
    }

    /// Notes a seal this instance committed or checked in full, so that a later lookup does not
    /// take an older one.
    func advance(to generation: Int64) {
        state.withLock { $0.highestGeneration = max($0.highestGeneration, generation) }
    }
}
