import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

/// The table seal's tree: every sealed row, grouped the way lookups read rows, under one root
/// that the seal's MAC covers. A lookup checks the rows it read against the tree in a bounded
/// number of steps (docs/architecture.md, "The seal tree"; docs/security.md).
///
/// **Leaves.** The rows a lookup reads together form a leaf (``Leaf``): a space's credentials and
/// its default choice; an origin's credentials (every credential of a host, which the git helper
/// reads); a space's sync registers; the trusted devices; the device identity and sync clock; a
/// search tag's rows (every credential with one label, or one attribute and value); a space's
/// kept versions (what lost a concurrent edit, docs/sync-format.md). A
/// credential row belongs to two leaves, its space's and its origin's. A leaf's digest is the XOR
/// of a keyed 16-byte hash of each of its rows (the leaf's name, the row's table, key and tags),
/// with the number of rows: computable from the rows alone, and incremental.
///
/// **Buckets.** Each leaf lives in the bucket that the first ``bucketBits`` bits of its blind
/// index name (the indexes are keyed hashes, so buckets fill evenly): a bucket's body lists its
/// leaves, sorted, each with its count and digest. An absent bucket is an empty one.
///
/// **Interior nodes.** Three levels of 64-way nodes above the buckets, each body the 16-byte
/// keyed hashes of its 64 children (zeros for an empty child; an all-empty node is not stored).
/// The root's hash, with the generation and the row count, is under the seal's MAC.
///
/// **Proofs.** A lookup of a space reads, in one statement, the space's rows, the seal, its bucket
/// and the three nodes above it: the rows give the leaf's digest, which the bucket must list (or,
/// for a space with no rows, must not list); the bucket's hash must be its slot in its parent, and
/// so on to the root, which the MAC authenticates. Deleting, restoring an older copy of, copying
/// in or duplicating a row of that space changes the leaf's digest or count; editing the bucket or
/// a node changes a hash; putting back an older bucket or node together with everything above it
/// puts back an older seal, which the generation (never lower than one this process saw, nor than
/// the rollback anchor at open) refuses. Without the key none of these hashes can be computed.
enum SealTree {
    static let digestBytes = 16
    /// 2¹⁸ buckets: about eight leaves a bucket at a million credentials (two leaves each), so a
    /// lookup hashes a few hundred bytes of bucket, not kilobytes.
    static let bucketBits = 18
    static let fanOutBits = 6
    static let fanOut = 1 << fanOutBits
    /// The level of the buckets: 0 is the root, 1 and 2 interior.
    static let bucketLevel = 3
    static let zeroDigest = [UInt8](repeating: 0, count: digestBytes)

    // MARK: Leaves

    /// A group of rows that a lookup reads together.
    struct Leaf: Hashable, Comparable {
        enum Kind: UInt8 {
            /// A space's credential rows and its default choice, by space index.
            case space = 1
            /// An origin's credential rows, by origin index.
            case origin = 2
            /// A space's sync registers (items and default), by space index.
            case syncSpace = 3
            /// Every trusted device: a store trusts a few, and lists them all at once.
            case trustedDevices = 4
            /// The one-row tables: the device identity and the sync clock.
            case singletons = 5
            /// A search tag's rows (the credentials with one label, or one attribute and value), by tag index.
            case tag = 6
            /// A space's kept versions (of every user), by space index.
            case keptVersions = 7
        }

        var kind: Kind
        /// The blind index that names the group (empty for ``Kind/singletons``).
        var group: [UInt8]

        static func < (lhs: Leaf, rhs: Leaf) -> Bool {
            if lhs.kind != rhs.kind { return lhs.kind.rawValue < rhs.kind.rawValue }
            return lhs.group.lexicographicallyPrecedes(rhs.group)
        }

        /// The bucket the leaf lives in.
        var bucket: Int {
            var value = 0
            for offset in 0..<3 { value = value << 8 | Int(offset < group.count ? group[offset] : 0) }
            return value >> (24 - SealTree.bucketBits)
        }
    }

    /// The leaves a sealed row belongs to.
    static func leaves(of row: SealedRowFingerprint) -> [Leaf] {
        let group = row.group
        switch row.table {
        case .credentials: return [Leaf(kind: .space, group: group), Leaf(kind: .origin, group: row.originIndex)]
        case .defaultChoices: return [Leaf(kind: .space, group: group)]
        case .syncItems, .syncDefaults: return [Leaf(kind: .syncSpace, group: group)]
        case .trustedDevices: return [Leaf(kind: .trustedDevices, group: [])]
        case .device, .syncClock: return [Leaf(kind: .singletons, group: [])]
        case .credentialTags: return [Leaf(kind: .tag, group: group)]
        case .keptVersions: return [Leaf(kind: .keptVersions, group: group)]
        }
    }

    /// What `row` adds to the digest of `leaf`.
    static func contribution(_ row: SealedRowFingerprint, to leaf: Leaf, keys: StoreKeyring) -> [UInt8] {
        var message = [UInt8]()
        message.reserveCapacity(5 + leaf.group.count + row.key.count + row.tags.count)
        message.append(0x4C)  // "L"
        message.append(leaf.kind.rawValue)
        message.append(UInt8(leaf.group.count))
        message += leaf.group
        message.append(row.table.rawValue)
        message.append(UInt8(row.key.count))
        message += row.key
        message += row.tags
        return keys.tableSealHash(message, outputBytes: digestBytes)
    }

    /// A leaf's count and digest: what its bucket records.
    struct LeafState: Equatable {
        var count: Int64 = 0
        var digest = SealTree.zeroDigest

        var isEmpty: Bool { count == 0 && digest == SealTree.zeroDigest }

        mutating func fold(_ contribution: [UInt8], countChange: Int64) {
            count += countChange
            xor(&digest, contribution)
        }

        mutating func fold(_ other: LeafState) {
            count += other.count
            xor(&digest, other.digest)
        }
    }

    /// The state of `leaf` computed from the rows it holds.
    static func state(of leaf: Leaf, rows: [SealedRowFingerprint], keys: StoreKeyring) -> LeafState {
        var state = LeafState()
        for row in rows { state.fold(contribution(row, to: leaf, keys: keys), countChange: 1) }
        return state
    }

    static func xor(_ digest: inout [UInt8], _ other: [UInt8]) {
        for index in 0..<digestBytes { digest[index] ^= other[index] }
    }

    // MARK: Nodes

    /// A node's id: its level in the high 32 bits, its position in the low.
    static func nodeID(level: Int, position: Int) -> Int64 { Int64(level) << 32 | Int64(position) }
    static func level(of id: Int64) -> Int { Int(id >> 32) }
    static func position(of id: Int64) -> Int { Int(id & 0xFFFF_FFFF) }

    /// The parent of a node below the root, and the child's slot in it.
    static func parent(of id: Int64) -> (id: Int64, slot: Int) {
        let position = position(of: id)
        return (nodeID(level: level(of: id) - 1, position: position >> fanOutBits), position & (fanOut - 1))
    }

    /// Every interior node's id, root first: 1 + 64 + 4,096.
    static let interiorNodeIDs: [Int64] = (0..<bucketLevel).flatMap { level in
        (0..<(1 << (fanOutBits * level))).map { nodeID(level: level, position: $0) }
    }

    /// A bucket's id and the ids of the interior nodes above it, root first.
    static func path(toBucket bucket: Int) -> [Int64] {
        (0...bucketLevel).map { level in nodeID(level: level, position: bucket >> (fanOutBits * (bucketLevel - level))) }
    }

    /// The keyed hash of a node's body, zeros for an empty (absent) node.
    static func hash(node id: Int64, body: [UInt8]?, keys: StoreKeyring) -> [UInt8] {
        guard let body, !body.isEmpty else { return zeroDigest }
        var message = [UInt8]()
        message.reserveCapacity(9 + body.count)
        message.append(level(of: id) == bucketLevel ? 0x42 : 0x4E)  // "B", "N"
        withUnsafeBytes(of: id.bigEndian) { message += $0 }
        message += body
        return keys.tableSealHash(message, outputBytes: digestBytes)
    }

    /// The child hash in `slot` of an interior node's body (absent: zeros).
    static func slot(_ slot: Int, of body: [UInt8]?) -> ArraySlice<UInt8> {
        guard let body, body.count == fanOut * digestBytes else { return zeroDigest[...] }
        return body[(slot * digestBytes)..<((slot + 1) * digestBytes)]
    }

    // MARK: Buckets

    /// A bucket's leaves, sorted; nil when the body does not parse (damage, or a forgery, which
    /// its hash refuses first).
    static func decodeBucket(_ body: [UInt8]?) -> [(leaf: Leaf, state: LeafState)]? {
        guard let body else { return [] }
        var entries: [(leaf: Leaf, state: LeafState)] = []
        var offset = 0
        while offset < body.count {
            guard offset + 2 <= body.count, let kind = Leaf.Kind(rawValue: body[offset]) else { return nil }
            let groupCount = Int(body[offset + 1])
            let end = offset + 2 + groupCount + 8 + digestBytes
            guard end <= body.count else { return nil }
            let group = Array(body[(offset + 2)..<(offset + 2 + groupCount)])
            var count: Int64 = 0
            for byte in body[(offset + 2 + groupCount)..<(offset + 10 + groupCount)] { count = count << 8 | Int64(byte) }
            let digest = Array(body[(offset + 10 + groupCount)..<end])
            entries.append((Leaf(kind: kind, group: group), LeafState(count: count, digest: digest)))
            offset = end
        }
        return entries
    }

    static func encodeBucket(_ entries: [(leaf: Leaf, state: LeafState)]) -> [UInt8]? {
        guard !entries.isEmpty else { return nil }
        var body = [UInt8]()
        for (leaf, state) in entries {
            body.append(leaf.kind.rawValue)
            body.append(UInt8(leaf.group.count))
            body += leaf.group
            withUnsafeBytes(of: state.count.bigEndian) { body += $0 }
            body += state.digest
        }
        return body
    }

    /// The state a bucket records for `leaf` (empty when it lists none), found in its body without
    /// decoding the other entries; nil when the body does not parse.
    static func recorded(_ leaf: Leaf, inBucket body: [UInt8]?) -> LeafState? {
        guard let body else { return LeafState() }
        var offset = 0
        while offset < body.count {
            guard offset + 2 <= body.count, Leaf.Kind(rawValue: body[offset]) != nil else { return nil }
            let groupCount = Int(body[offset + 1])
            let end = offset + 2 + groupCount + 8 + digestBytes
            guard end <= body.count else { return nil }
            if body[offset] == leaf.kind.rawValue, groupCount == leaf.group.count,
               body[(offset + 2)..<(offset + 2 + groupCount)].elementsEqual(leaf.group) {
                var count: Int64 = 0
                for byte in body[(offset + 2 + groupCount)..<(offset + 10 + groupCount)] { count = count << 8 | Int64(byte) }
                return LeafState(count: count, digest: Array(body[(offset + 10 + groupCount)..<end]))
            }
            offset = end
        }
        return LeafState()
    }

    static func tampered(_ detail: String) -> CredentialStorageError {
        TableSealing.tampered(detail)
    }
}

// MARK: - Writing

extension SealTree {
    /// The tree as one write transaction changes it: leaf changes go into their buckets as they
    /// come (``applyToBuckets(_:writer:keys:)``, batch by batch for a large import), and the
    /// interior nodes above the buckets it changed are rewritten once, at the end (``finish(writer:keys:)``).
    ///
    /// Every node it reads is first checked against its parent, up to `root` (the hash the seal's
    /// MAC authenticated): a write must not re-hash a node that was edited or put back outside
    /// credstore, which would bless it. A leaf whose rows were tampered with stays detectable
    /// however often it is written: the changes are XORed in, so whatever the leaf's digest
    /// lacked or held too much, it still lacks or holds.
    struct Update {
        let root: [UInt8]
        /// Interior nodes read and checked; they do not change before ``finish(writer:keys:)``.
        private var interior: [Int64: [UInt8]?] = [:]
        /// The new hash of each bucket this write has rewritten, for its parent.
        private var bucketHashes: [Int: [UInt8]] = [:]

        init(root: [UInt8]) { self.root = root }

        var isEmpty: Bool { bucketHashes.isEmpty }

        mutating func applyToBuckets(
            _ changes: [Leaf: LeafState], writer: any CredentialRepositoryWriting, keys: StoreKeyring
        ) throws {
            let byBucket = Dictionary(grouping: changes, by: { $0.key.bucket })
            for bucket in byBucket.keys.sorted() {
                let id = SealTree.nodeID(level: SealTree.bucketLevel, position: bucket)
                let body = try writer.sealNodes([id])[id]
                let expected = try bucketHashes[bucket] ?? expectedHash(of: id, reader: writer, keys: keys)
                guard Sodium.constantTimeEquals(SealTree.hash(node: id, body: body, keys: keys), expected) else {
                    throw SealTree.tampered("a bucket of the seal tree does not match its parent")
                }
                guard var entries = SealTree.decodeBucket(body) else { throw SealTree.tampered("a bucket of the seal tree does not parse") }
                for (leaf, change) in byBucket[bucket]! {
                    if let index = entries.firstIndex(where: { $0.leaf == leaf }) {
                        entries[index].state.fold(change)
                        if entries[index].state.isEmpty { entries.remove(at: index) }
                    } else if !change.isEmpty {
                        let index = entries.firstIndex { leaf < $0.leaf } ?? entries.endIndex
                        entries.insert((leaf, change), at: index)
                    }
                }
                let newBody = SealTree.encodeBucket(entries)
                try writer.setSealNode(id, body: newBody)
                bucketHashes[bucket] = SealTree.hash(node: id, body: newBody, keys: keys)
            }
        }

        /// Rewrites the interior nodes above the changed buckets and returns the new root hash.
        mutating func finish(writer: any CredentialRepositoryWriting, keys: StoreKeyring) throws -> [UInt8] {
            guard !bucketHashes.isEmpty else { return root }
            var pending: [Int64: [(slot: Int, hash: [UInt8])]] = [:]
            for (bucket, hash) in bucketHashes {
                let (parentID, slot) = SealTree.parent(of: SealTree.nodeID(level: SealTree.bucketLevel, position: bucket))
                pending[parentID, default: []].append((slot, hash))
            }
            bucketHashes = [:]
            var newRoot = root
            for level in stride(from: SealTree.bucketLevel - 1, through: 0, by: -1) {
                var next: [Int64: [(slot: Int, hash: [UInt8])]] = [:]
                for id in pending.keys.sorted() {
                    var body = try verified(id, reader: writer, keys: keys)
                        ?? [UInt8](repeating: 0, count: SealTree.fanOut * SealTree.digestBytes)
                    for (slot, hash) in pending[id]! {
                        body.replaceSubrange((slot * SealTree.digestBytes)..<((slot + 1) * SealTree.digestBytes), with: hash)
                    }
                    let stored: [UInt8]? = body.allSatisfy { $0 == 0 } ? nil : body
                    try writer.setSealNode(id, body: stored)
                    let newHash = SealTree.hash(node: id, body: stored, keys: keys)
                    if level == 0 {
                        newRoot = newHash
                    } else {
                        let (parentID, slot) = SealTree.parent(of: id)
                        next[parentID, default: []].append((slot, newHash))
                    }
                }
                pending = next
            }
            interior = [:]
            return newRoot
        }

        /// The hash that the (unchanged) parent of node `id` records for it.
        private mutating func expectedHash(of id: Int64, reader: any CredentialRepositoryReading, keys: StoreKeyring) throws -> [UInt8] {
            guard SealTree.level(of: id) > 0 else { return root }
            let (parentID, slot) = SealTree.parent(of: id)
            return Array(SealTree.slot(slot, of: try verified(parentID, reader: reader, keys: keys)))
        }

        /// An interior node's body as stored, checked against its parent up to the root.
        private mutating func verified(_ id: Int64, reader: any CredentialRepositoryReading, keys: StoreKeyring) throws -> [UInt8]? {
            if let body = interior[id] { return body }
            let body = try reader.sealNodes([id])[id]
            let expected = try expectedHash(of: id, reader: reader, keys: keys)
            guard Sodium.constantTimeEquals(SealTree.hash(node: id, body: body, keys: keys), expected) else {
                throw SealTree.tampered("a node of the seal tree does not match its parent")
            }
            interior[id] = body
            return body
        }
    }
}

// MARK: - Checking every row

extension SealTree {
    /// What the full check found: the rows' count, and whether the synchronizable credentials and
    /// the live sync registers pair up.
    struct FullScan {
        var count: Int64 = 0
        var synchronizableCredentials = [UInt8](repeating: 0, count: 32)
        var liveRegisters = [UInt8](repeating: 0, count: 32)
        var synchronizableCredentialCount = 0
        var liveRegisterCount = 0
    }

    /// Checks the whole tree against `root` and every row against the tree: each node's hash in
    /// its parent, each bucket's leaves against the rows that belong in them (summed per bucket:
    /// a keyed hash cannot be made to cancel out without the key), and no row outside the tree.
    static func checkEverything(
        _ reader: any CredentialRepositoryReading, root: [UInt8], keys: StoreKeyring,
        tables: [SealedRowFingerprint.Table] = SealedRowFingerprint.Table.allCases
    ) throws -> FullScan {
        // The tree: every node's hash, and each bucket's recorded sum.
        var hashes: [Int64: [UInt8]] = [:]
        var interior: [Int64: [UInt8]] = [:]
        // Sparse, so the check costs what the store holds, not what the tree could hold.
        var recorded: [Int: BucketSum] = [:]
        try reader.forEachSealNode { id, body in
            let level = level(of: id), position = position(of: id)
            guard level >= 0, level <= bucketLevel, position < 1 << (fanOutBits * level), !body.isEmpty else {
                throw tampered("the seal tree holds a node that is not one of its own")
            }
            hashes[id] = hash(node: id, body: body, keys: keys)
            if level == bucketLevel {
                guard let entries = decodeBucket(body) else { throw tampered("a bucket of the seal tree does not parse") }
                for (leaf, state) in entries {
                    guard leaf.bucket == position else { throw tampered("a leaf of the seal tree is in the wrong bucket") }
                    recorded[position, default: BucketSum()].add(count: state.count, digest: state.digest)
                }
            } else {
                guard body.count == fanOut * digestBytes else { throw tampered("a node of the seal tree is damaged") }
                interior[id] = body
            }
        }
        // Each node's hash is its slot in its parent; each interior slot is its child's hash.
        for (id, _) in hashes where level(of: id) > 0 {
            guard interior[parent(of: id).id] != nil else { throw tampered("a node of the seal tree has no parent") }
        }
        for (id, body) in interior {
            for slotIndex in 0..<fanOut {
                let child = nodeID(level: level(of: id) + 1, position: position(of: id) << fanOutBits | slotIndex)
                guard Sodium.constantTimeEquals(Array(slot(slotIndex, of: body)), hashes[child] ?? zeroDigest) else {
                    throw tampered("a node of the seal tree does not match its parent")
                }
            }
        }
        guard Sodium.constantTimeEquals(hashes[nodeID(level: 0, position: 0)] ?? zeroDigest, root) else {
            throw tampered("the seal tree does not match its root")
        }
        hashes = [:]
        interior = [:]

        // The rows, summed per bucket exactly as the buckets record them.
        var scan = FullScan()
        var summed: [Int: BucketSum] = [:]
        try reader.forEachFingerprint(in: tables) { fingerprint, synchronizableItem in
            scan.count += 1
            for leaf in leaves(of: fingerprint) {
                summed[leaf.bucket, default: BucketSum()].add(count: 1, digest: contribution(fingerprint, to: leaf, keys: keys))
            }
            guard synchronizableItem else { return }
            // The keys themselves, unhashed: this compares two sets that the tree already
            // authenticates, so someone without the key cannot make them differ unnoticed.
            if fingerprint.table == .credentials {
                fold(&scan.synchronizableCredentials, fingerprint.key)
                scan.synchronizableCredentialCount += 1
            } else {
                fold(&scan.liveRegisters, fingerprint.key)
                scan.liveRegisterCount += 1
            }
        }
        // A bucket whose leaves sum to nothing is one the tree may list (its leaves emptied) or not.
        recorded = recorded.filter { !$0.value.isEmpty }
        summed = summed.filter { !$0.value.isEmpty }
        guard BucketSum.same(summed, recorded) else { throw tampered("the rows differ from those sealed") }
        return scan
    }

    /// One bucket's leaves summed: their rows' count, and the XOR of their digests as two words.
    struct BucketSum {
        var count: Int64 = 0
        var low: UInt64 = 0
        var high: UInt64 = 0

        var isEmpty: Bool { count == 0 && low == 0 && high == 0 }

        mutating func add(count rows: Int64, digest: [UInt8]) {
            count += rows
            for index in 0..<8 {
                low ^= UInt64(digest[index]) << (8 * index)
                high ^= UInt64(digest[8 + index]) << (8 * index)
            }
        }

        /// Whether both hold the same buckets with the same sums; the digests are compared
        /// without an early exit, as every MAC here is.
        static func same(_ lhs: [Int: BucketSum], _ rhs: [Int: BucketSum]) -> Bool {
            guard lhs.count == rhs.count else { return false }
            var difference: UInt64 = 0
            for (bucket, sum) in lhs {
                guard let other = rhs[bucket], other.count == sum.count else { return false }
                difference |= (sum.low ^ other.low) | (sum.high ^ other.high)
            }
            return difference == 0
        }
    }

    /// XORs `bytes` into `accumulator`, wrapping around.
    private static func fold(_ accumulator: inout [UInt8], _ bytes: [UInt8]) {
        for (offset, byte) in bytes.enumerated() { accumulator[offset % accumulator.count] ^= byte }
    }
}
