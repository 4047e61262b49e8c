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
/// An instance keeps the interior nodes it has checked, each with its hash: under any seal, a kept
/// node is the one on disk exactly when its hash is its slot in the (checked) parent, so a lookup
/// walks its path from the root comparing 16-byte hashes, and reads and hashes only its bucket
/// and the nodes a write has changed since. A node edited on disk is never read while the kept one
/// matches; one that does not match is read, and kept only once its hash matches. A process that
/// keeps missing (many lookups of a large store) reads every interior node once, in one statement
/// (``prefetchAfterMisses``): at most 4,161 nodes, about 4 MiB, whatever the store's size.
///
/// The seal itself is compared byte for byte with the one last checked, and a new one is
/// authenticated; a seal whose generation is lower than one this instance has seen is a rollback
/// of the store while it was open.
final class SealChecks: Sendable {
    private struct Kept {
        var body: [UInt8]
        var hash: [UInt8]
    }

    private struct State {
        var seal: TableSeal?
        /// Interior nodes read and checked, by id, with their hashes; an empty body for an absent
        /// node (hash zeros).
        var interior: [Int64: Kept] = [:]
        var highestGeneration: Int64 = 0
        /// Lookups that had to read interior nodes, and whether every node was read at once.
        var misses = 0
        var prefetched = false
    }

    /// After this many lookups that had to read interior nodes, read them all.
    static let prefetchAfterMisses = 8

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

    /// The claim of a search tag's leaf: the keys of every credential row that carries it.
    static func tagClaim(_ tagIndex: BlindIndex, _ keys: [(space: BlindIndex, user: BlindIndex)], keys keyring: StoreKeyring) -> Claim {
        let leaf = SealTree.Leaf(kind: .tag, group: tagIndex.bytes)
        let rows = keys.map { SealedRowFingerprint(tagIndex: tagIndex, space: $0.space, user: $0.user) }
        return Claim(leaf: leaf, state: SealTree.state(of: leaf, rows: rows, keys: keyring))
    }

    /// The claim of a space's kept versions' leaf: every kept version of every user of the space.
    static func keptVersionsClaim(_ spaceIndex: BlindIndex, _ versions: [SealedKeptVersion], keys: StoreKeyring) -> Claim {
        let leaf = SealTree.Leaf(kind: .keptVersions, group: spaceIndex.bytes)
        return Claim(leaf: leaf, state: SealTree.state(of: leaf, rows: versions.map(SealedRowFingerprint.init), keys: keys))
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
    /// nodes it must read first (empty: the claims hold): those whose kept copy is not what the
    /// parent vouches for; the caller reads them with the seal and hands them to
    /// ``learn(_:requested:seal:keys:)``, then asks again. Throws `tamperDetected` when a claim
    /// does not hold.
    func check(
        _ claims: [Claim], seal: TableSeal?, buckets: [Int64: [UInt8]], keys: StoreKeyring, anchorRead: Bool = true, floor: Int64? = nil
    ) throws -> [Int64] {
        try state.withLock { state in
            try Self.adopt(seal, into: &state, storeID: storeID, keys: keys, anchorRead: anchorRead, floor: floor)
            let root = state.seal!.digest
            var missing: [Int64] = []
            for claim in claims {
                let path = SealTree.path(toBucket: claim.leaf.bucket)
                // Down from the root: each kept node must hash to its slot in the parent.
                var expected = root[...]
                for (level, id) in path.enumerated() {
                    if level == SealTree.bucketLevel {
                        let bucket = buckets[id]
                        guard Sodium.constantTimeEquals(SealTree.hash(node: id, body: bucket, keys: keys), Array(expected)) else {
                            throw SealTree.tampered("a bucket of the seal tree does not match its parent")
                        }
                        guard let recorded = SealTree.recorded(claim.leaf, inBucket: bucket), recorded.count == claim.state.count,
                              Sodium.constantTimeEquals(recorded.digest, claim.state.digest)
                        else {
                            throw TableSealing.tampered("the rows differ from those sealed")
                        }
                        break
                    }
                    guard let kept = state.interior[id], kept.hash.elementsEqual(expected) else {
                        for below in path[level..<SealTree.bucketLevel] where !missing.contains(below) { missing.append(below) }
                        break
                    }
                    expected = SealTree.slot(SealTree.parent(of: path[level + 1]).slot, of: kept.body.isEmpty ? nil : kept.body)
                }
            }
            if !missing.isEmpty {
                state.misses += 1
                if state.misses >= Self.prefetchAfterMisses, !state.prefetched {
                    // Every interior node, in one read, checked once; later lookups hash only buckets.
                    state.prefetched = true
                    return SealTree.interiorNodeIDs
                }
            }
            return missing
        }
    }

    /// Checks the interior nodes `requested` (those of them in `found`; the others are absent,
    /// so empty) against `seal`, from the root down, and keeps those that match. A requested node
    /// that does not match its checked parent is `tamperDetected`.
    func learn(_ found: [Int64: [UInt8]], requested: [Int64], seal: TableSeal?, keys: StoreKeyring) throws {
        try state.withLock { state in
            try Self.adopt(seal, into: &state, storeID: storeID, keys: keys)
            // By level, so that each parent is checked before its children.
            let byLevel = requested.sorted { SealTree.level(of: $0) < SealTree.level(of: $1) }
            var checked: [Int64: [UInt8]] = [:]
            for id in byLevel {
                let body = found[id]
                let expected: [UInt8]
                if SealTree.level(of: id) == 0 {
                    expected = state.seal!.digest
                } else {
                    let (parentID, slot) = SealTree.parent(of: id)
                    if let parent = checked[parentID] {
                        expected = Array(SealTree.slot(slot, of: parent.isEmpty ? nil : parent))
                    } else if let kept = state.interior[parentID] {
                        expected = Array(SealTree.slot(slot, of: kept.body.isEmpty ? nil : kept.body))
                    } else {
                        continue
                    }
                }
                let hash = SealTree.hash(node: id, body: body, keys: keys)
                guard Sodium.constantTimeEquals(hash, expected) else {
                    throw SealTree.tampered("a node of the seal tree does not match its parent")
                }
                checked[id] = body ?? []
                state.interior[id] = Kept(body: body ?? [], hash: hash)
            }
        }
    }

    /// Makes `seal` the one checked against: the same bytes as the last one need nothing; a new
    /// one is authenticated and must not be older than one seen.
    private static func adopt(
        _ seal: TableSeal?, into state: inout State, storeID: [UInt8], keys: StoreKeyring, anchorRead: Bool = true, floor: Int64? = nil
    ) throws {
        guard state.seal != seal else { return }
        // A new seal is compared with the anchor too, read before the store (see `check(keys:…)`).
        guard anchorRead else { throw AnchorNeeded() }
        let seal = try TableSealing.authenticated(seal, keys: keys, storeID: storeID)
        let lowest = max(state.highestGeneration, floor ?? 0)
        guard seal.generation >= lowest else {
            throw OlderSeal(seen: lowest, found: seal.generation)
        }
        state.seal = seal
        state.highestGeneration = seal.generation
    }

    /// A seal older than one this instance has seen. A read that was overtaken by another
    /// thread's (which saw a later commit first) finds one too, so it is read again before it is
    /// called a rollback (``tampered``).
    struct OlderSeal: Error {
        var seen: Int64
        var found: Int64

        var tampered: CredentialStorageError {
            TableSealing.tampered("the seal went back from generation \(seen) to \(found) while the store was open")
        }
    }

    /// A new seal met without the anchor read first: read it, then the store again.
    struct AnchorNeeded: Error {}

    /// Checks `claims` with what `read` returns, reading the interior nodes it lacks with
    /// `readInterior` (the seal and those nodes, in one snapshot). Between the two reads another
    /// writer may commit a new seal, or another thread's read may overtake this one: then it reads
    /// again.
    func check<T>(
        keys: StoreKeyring, anchor: AnchorFile?,
        read: () throws -> (result: T, claims: [Claim], seal: TableSeal?, buckets: [Int64: [UInt8]]),
        readInterior: ([Int64]) throws -> (seal: TableSeal?, nodes: [Int64: [UInt8]])
    ) throws -> T {
        var older: OlderSeal?
        var readAnchor = anchor == nil
        for _ in 0..<5 {
            do {
                // A seal this instance has not checked yet is compared with the rollback anchor,
                // read before the store: read after, the anchor may rightly be ahead of the snapshot
                // (another process committed in between); read before, it holds only generations
                // committed before it. While the seal stays the same, no anchor is read.
                let floor = readAnchor ? anchor?.recordedGeneration() : nil
                let (result, claims, seal, buckets) = try read()
                var missing = try check(claims, seal: seal, buckets: buckets, keys: keys, anchorRead: readAnchor, floor: floor)
                if missing.isEmpty { return result }
                let interior = try readInterior(missing)
                guard interior.seal == seal else { continue }
                try learn(interior.nodes, requested: missing, seal: seal, keys: keys)
                missing = try check(claims, seal: seal, buckets: buckets, keys: keys)
                if missing.isEmpty { return result }
            } catch let error as OlderSeal {
                older = error
                readAnchor = true
            } catch is AnchorNeeded {
                readAnchor = true
            }
        }
        if let older { throw older.tampered }
        throw CredentialStorageError(.io, "the store kept changing while it was read; retry")
    }

    /// The newest generation this instance has seen or committed.
    var highestGeneration: Int64 { state.withLock { $0.highestGeneration } }

    /// Notes a seal this instance committed or checked in full, so that a later lookup does not
    /// take an older one.
    func advance(to generation: Int64) {
        state.withLock { $0.highestGeneration = max($0.highestGeneration, generation) }
    }
}
