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
/// under the seal it checked them against, so a later lookup under the same seal reads and hashes
/// only its bucket, against the kept parent (a node edited on disk meanwhile is never read: the
/// kept copy is the one the seal vouched for). The seal itself is compared byte for byte with the one last
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

    /// The ids of the buckets that hold `leaves`.
    static func bucketIDs(for leaves: [SealTree.Leaf]) -> [Int64] {
        var ids: [Int64] = []
        for leaf in leaves {
            let id = SealTree.nodeID(level: SealTree.bucketLevel, position: leaf.bucket)
            if !ids.contains(id) { ids.append(id) }
        }
        return ids
    }

    /// Checks `claims` against the tree: `seal` and `buckets` (the claims' buckets, absent ones
    /// left out) must come from the snapshot the claims' rows were read in. Returns the interior
    /// nodes it has not checked under this seal yet (empty: the claims hold); the caller reads
    /// them with the seal and hands them to ``learn(_:requested:seal:keys:)``, then asks again.
    /// Throws `tamperDetected` when a claim does not hold.
    func check(_ claims: [Claim], seal: TableSeal?, buckets: [Int64: [UInt8]], keys: StoreKeyring) throws -> [Int64] {
        try state.withLock { state in
            try Self.adopt(seal, into: &state, storeID: storeID, keys: keys)
            var missing: [Int64] = []
            for claim in claims {
                let path = SealTree.path(toBucket: claim.leaf.bucket)
                for id in path.dropLast() where state.interior[id] == nil && !missing.contains(id) { missing.append(id) }
            }
            guard missing.isEmpty else { return missing }
            for claim in claims {
                let bucketID = SealTree.nodeID(level: SealTree.bucketLevel, position: claim.leaf.bucket)
                let bucket = buckets[bucketID]
                let (parentID, slot) = SealTree.parent(of: bucketID)
                guard Sodium.constantTimeEquals(SealTree.hash(node: bucketID, body: bucket, keys: keys),
                                                Array(SealTree.slot(slot, of: state.interior[parentID]!)))
                else {
                    throw SealTree.tampered("a bucket of the seal tree does not match its parent")
                }
                guard let recorded = SealTree.recorded(claim.leaf, inBucket: bucket), recorded.count == claim.state.count,
                      Sodium.constantTimeEquals(recorded.digest, claim.state.digest)
                else {
                    throw TableSealing.tampered("the rows differ from those sealed")
                }
            }
            return []
        }
    }

    /// Checks the interior nodes `requested` (those of them in `found`; the others are absent,
    /// so empty) against `seal`, from the root down, and keeps them for later lookups under it.
    func learn(_ found: [Int64: [UInt8]], requested: [Int64], seal: TableSeal?, keys: StoreKeyring) throws {
        try state.withLock { state in
            try Self.adopt(seal, into: &state, storeID: storeID, keys: keys)
            for id in requested.sorted(by: { SealTree.level(of: $0) < SealTree.level(of: $1) }) where state.interior[id] == nil {
                let body = found[id]
                let expected: [UInt8]
                if SealTree.level(of: id) == 0 {
                    expected = state.seal!.digest
                } else {
                    let (parentID, slot) = SealTree.parent(of: id)
                    guard let parent = state.interior[parentID] else { continue }
                    expected = Array(SealTree.slot(slot, of: parent))
                }
                guard Sodium.constantTimeEquals(SealTree.hash(node: id, body: body, keys: keys), expected) else {
                    throw SealTree.tampered("a node of the seal tree does not match its parent")
                }
                state.interior[id] = body ?? []
            }
        }
    }

    /// Makes `seal` the one checked against: the same bytes as the last one need nothing; a new
    /// one is authenticated, must not be older than one seen, and empties the nodes kept.
    private static func adopt(_ seal: TableSeal?, into state: inout State, storeID: [UInt8], keys: StoreKeyring) throws {
        guard state.seal != seal else { return }
        let seal = try TableSealing.authenticated(seal, keys: keys, storeID: storeID)
        guard seal.generation >= state.highestGeneration else {
            throw TableSealing.tampered(
                "the seal went back from generation \(state.highestGeneration) to \(seal.generation) while the store was open")
        }
        state.seal = seal
        state.interior = [:]
        state.highestGeneration = seal.generation
    }

    /// Checks `claims` with what `read` returns, reading the interior nodes it lacks with
    /// `readInterior` (the seal and those nodes, in one snapshot). Between the two reads another
    /// writer may commit a new seal: then it reads again.
    func check<T>(
        keys: StoreKeyring,
        read: () throws -> (result: T, claims: [Claim], seal: TableSeal?, buckets: [Int64: [UInt8]]),
        readInterior: ([Int64]) throws -> (seal: TableSeal?, nodes: [Int64: [UInt8]])
    ) throws -> T {
        for _ in 0..<4 {
            let (result, claims, seal, buckets) = try read()
            var missing = try check(claims, seal: seal, buckets: buckets, keys: keys)
            if missing.isEmpty { return result }
            let interior = try readInterior(missing)
            guard interior.seal == seal else { continue }
            try learn(interior.nodes, requested: missing, seal: seal, keys: keys)
            missing = try check(claims, seal: seal, buckets: buckets, keys: keys)
            if missing.isEmpty { return result }
        }
        throw CredentialStorageError(.io, "the store kept changing while it was read; retry")
    }

    /// Notes a seal this instance committed or checked in full, so that a later lookup does not
    /// take an older one.
    func advance(to generation: Int64) {
        state.withLock { $0.highestGeneration = max($0.highestGeneration, generation) }
    }
}
