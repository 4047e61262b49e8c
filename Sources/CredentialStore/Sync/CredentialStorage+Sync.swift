package import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import Foundation
import Logging

extension CredentialStorageError.Code {
    /// A sync bundle's newest clock reading is older than 180 days: merging it could bring back
    /// what was deleted since, so it is refused. `credstore sync` skips it with a note.
    public static let bundleTooOld = CredentialStorageError.Code(rawValue: "bundleTooOld")
}

extension CredentialStorage {
    /// How far ahead of this machine's clock a bundle's clock may be: more is a broken clock, and
    /// accepting it would let that machine win every later conflict.
    static let maximumClockSkewMillis: Int64 = SyncWindows.maximumClockSkew

    /// What ``SyncDevice/deviceKey`` does.
    var deviceKey: DeviceKey {
        get throws { try deviceIdentity().publicKey }
    }

    /// What ``SyncDevice/deviceID`` does.
    var deviceID: String {
        get throws { try deviceIdentity().deviceID.map { String(format: "%02x", $0) }.joined() }
    }

    /// What ``SyncDevice/trust(_:)`` does.
    func trustDevice(_ key: DeviceKey) throws {
        _ = try followRekey()
        let pipeline = makePipeline(keys: keys)
        _ = try repository.write(observer: pipeline, { transaction -> Int64? in
            // Read, not made: a store without a device identity has no own key to mistake.
            if let own = try transaction.device(), own.publicKey == key.bytes {
                throw CredentialStorageError(.invalidInput, "that is this store's own device key; trust the key another store shows")
            }
            let index = keys.trustedKeyIndex(key)
            var trusting = TrustedDeviceRecord(publicKey: key, trusted: clock.now())
            if let sealed = try transaction.trustedDevice(keyIndex: index), let record = keys.decryptTrustedDevice(keyIndex: index, sealed: sealed) {
                if record.isTrusted { return nil }
                trusting.lastMerged = record.lastMerged
                trusting.lastMergedCreated = record.lastMergedCreated
                trusting.mergedOwnBundle = record.mergedOwnBundle
                // Every revocation of it up to the one this trust overrides is passed over from now on.
                trusting.overridesRevocationsUpTo = max(record.revocation?.revokedAt ?? .min, record.overridesRevocationsUpTo ?? .min)
            }
            try transaction.addTrustedDevice(keyIndex: index, sealedPublicKey: keys.encryptTrustedDevice(trusting))
            return try pipeline.foldSeal(into: transaction)
        }, afterCommit: { generation in
            if let generation { committed(generation: generation) }
        })
    }

    /// What ``SyncDevice/untrust(_:)`` does.
    func untrustDevice(_ key: DeviceKey) throws {
        _ = try followRekey()
        let device = try deviceIdentity()
        let pipeline = makePipeline(keys: keys)
        _ = try repository.write(observer: pipeline, { transaction -> Int64? in
            let index = keys.trustedKeyIndex(key)
            guard key != device.publicKey, let sealed = try transaction.trustedDevice(keyIndex: index),
                  var record = keys.decryptTrustedDevice(keyIndex: index, sealed: sealed), record.isTrusted
            else {
                throw CredentialStorageError(.notFound, "this store does not trust that device")
            }
            record.revocation = RevocationStatement(revoking: key, by: device, at: clock.now())
            try transaction.addTrustedDevice(keyIndex: index, sealedPublicKey: keys.encryptTrustedDevice(record))
            return try pipeline.foldSeal(into: transaction)
        }, afterCommit: { generation in
            if let generation { committed(generation: generation) }
        })
    }

    /// What ``SyncDevice/trustedDevices()`` does.
    func trustedDevices() throws -> [TrustedDevice] {
        try deviceRecords().filter(\.isTrusted).map { record in
            TrustedDevice(
                key: record.publicKey,
                trusted: record.trusted.map { Date(timeIntervalSince1970: Double($0) / 1000) },
                lastMerged: record.lastMerged.map { Date(timeIntervalSince1970: Double($0) / 1000) })
        }
    }

    /// What ``SyncDevice/revokedDevices()`` does.
    func revokedDevices() throws -> [DeviceRevocation] {
        try deviceRecords().compactMap { $0.revocation.map(DeviceRevocation.init) }
    }

    /// Every row of the trusted devices table, opened and checked against the seal, ordered by key.
    private func deviceRecords() throws -> [TrustedDeviceRecord] {
        _ = try followRekey()
        let keys = keys
        let rows = try repository.snapshotRead { reader in
            let rows = try reader.allTrustedDevices()
            // All of them are one leaf of the seal tree: none deleted, restored or copied in.
            try checkLeaves([SealChecks.trustedDevicesClaim(rows, keys: keys)], reader: reader, keys: keys)
            return rows
        }
        return try rows.map { entry in
            guard let record = keys.decryptTrustedDevice(keyIndex: entry.keyIndex, sealed: entry.sealedPublicKey) else { throw StoreKeyring.tampered }
            return record
        }.sorted { $0.publicKey.description < $1.publicKey.description }
    }

    /// What ``SyncDevice/applyRevocations(fromBundlesAt:)`` does.
    @discardableResult
    func applyRevocations(fromBundlesAt urls: [URL]) throws -> [DeviceRevocation] {
        let device = try deviceIdentity(settling: false)
        var statements: [RevocationStatement] = []
        for url in urls {
            guard let source = try? BundleFileSource(url: url),
                  let stream = try? BundleStream(source: source, passphrase: nil, device: device),
                  stream.metadata.revocationCount > 0,
                  case .revocations(let carried)? = try? stream.next(),
                  carried.allSatisfy(\.verifies)
            else { continue }
            statements += carried
        }
        guard !statements.isEmpty else { return [] }
        return try mutate { try $0.applyRevocations(statements, device: device) }
    }

    /// What ``SyncDevice/export(to:protection:)`` does.
    @discardableResult
    func exportSynchronizable(to url: URL, protection: BundleProtection) throws -> Bool {
        // A mistyped recipient is refused before anything is read or written, and so is a revoked one.
        if case .recipients(let keys) = protection {
            let revoked = Dictionary(try revokedDevices().map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
            if let refused = keys.lazy.compactMap({ revoked[$0] }).first {
                throw CredentialStorageError(.invalidInput,
                    "the device \(refused.key) was revoked (by \(refused.revokedBy)); nothing was exported to it. Trust it again first if that was a mistake")
            }
        }
        let device = try deviceIdentity()
        // Through `mutate`: the expiry of old tombstones is folded into the table seal.
        let contents = try mutate { mutation -> BundleContents in
            let (transaction, keys) = (mutation.transaction, mutation.keys)
            // An export reads every synchronizable row and the sync state: all of it against the seal.
            try checkEveryRow(transaction, keys: keys)
            try mutation.ledger.dropExpiredTombstones()
            // A synchronizable credential without a live register would silently stay home, and a
            // live register without its credential would send nothing: either is tampering.
            let unpaired = try transaction.unpairedSyncItems()
            guard unpaired.credentials.isEmpty, unpaired.registers.isEmpty else {
                throw TableSealing.unpaired("\(unpaired.credentials.count) credentials without a register, \(unpaired.registers.count) registers without a credential")
            }
            var items: [BundleItem] = []
            let now = clock.now()
            for sealed in try transaction.allSyncItems() {
                var state = try keys.decrypt(sealed)
                if state.unpublished {
                    state.unpublished = false
                    state.publishedAt = now
                    // A removal made here leaves this store now. Made long enough ago that the
                    // other stores would forget it before it could reach them all, it is
                    // remembered from now, everywhere. (A deletion that came from another device
                    // keeps the time it travels with: redated at each hop, it would never go.)
                    if state.stamp.device == device.deviceID, state.rememberedSince == nil, now - state.stamp.wall > SyncWindows.margin {
                        state.rememberedSince = now
                    }
                    try mutation.ledger.record(state, spaceIndex: sealed.spaceIndex, userIndex: sealed.userIndex)
                }
                var password: String?
                var details = ByteWriter(capacity: 0)
                if !state.deleted {
                    guard let row = try transaction.credential(space: sealed.spaceIndex, user: sealed.userIndex),
                          row.persistence == .synchronizable
                    else { throw TableSealing.unpaired("a live register without its credential") }
                    let credential = try keys.decryptCredential(row)
                    password = credential.password
                    if credential.hasDetails { StoreKeyring.appendDetails(of: credential, to: &details) }
                }
                items.append(BundleItem(
                    space: state.space, user: state.user, stamp: state.stamp, password: password, details: details.bytes,
                    rememberedSince: state.rememberedSince))
                details.wipe()
            }
            let defaults = try transaction.allSyncDefaults().map { sealed in
                let state = try keys.decrypt(sealed)
                return BundleDefault(space: state.space, user: state.user, stamp: state.stamp)
            }
            // Every revocation this store applied travels on, signed by whoever made it.
            let revocations = try transaction.allTrustedDevices().compactMap { entry -> RevocationStatement? in
                guard let record = keys.decryptTrustedDevice(keyIndex: entry.keyIndex, sealed: entry.sealedPublicKey) else { throw StoreKeyring.tampered }
                return record.revocation
            }.sorted { $0.revoked.bytes.lexicographicallyPrecedes($1.revoked.bytes) }
            // Which bundles of the devices it trusts this store merged, so each knows which of its
            // deletions have reached this store.
            let merged = try transaction.allTrustedDevices().compactMap { entry -> BundleMergeNote? in
                guard let record = keys.decryptTrustedDevice(keyIndex: entry.keyIndex, sealed: entry.sealedPublicKey) else { throw StoreKeyring.tampered }
                guard record.isTrusted, let created = record.lastMergedCreated else { return nil }
                return BundleMergeNote(device: record.publicKey, created: created)
            }.sorted { $0.device.bytes.lexicographicallyPrecedes($1.device.bytes) }
            return BundleContents(
                senderDevice: device.deviceID, signer: device.publicKey, created: now, items: items, defaults: defaults,
                revocations: Array(revocations.prefix(BundleFormat.maximumRevocations)), merged: merged)
        }
        if case .recipients(let keys) = protection,
           Self.holdsTheSame(url, contents: contents, recipients: Set(keys.map(BundleFormat.keyID)), device: device) {
            logger.debug("the sync bundle is unchanged", metadata: ["items": "\(contents.items.count)"])
            return false
        }
        let bytes = try BundleFormat.write(contents, protection: protection, signer: device)
        try StoreFiles.writeAtomically(url, bytes: bytes)
        logger.debug("exported a sync bundle", metadata: ["items": "\(contents.items.count)"])
        return true
    }

    /// How old a bundle may grow before an export with nothing new writes it again all the same:
    /// well inside the age past which a bundle is no longer merged, so a quiet device stays in
    /// the fleet.
    static let bundleRefreshMillis: Int64 = 30 * 24 * 3600 * 1000

    /// Whether the bundle at `url` is one this device wrote, for exactly `recipients`, holding
    /// `contents`' revocations, items and default choices, and younger than ``bundleRefreshMillis``. Anything
    /// that cannot be read or checked is "no": the bundle is then written.
    private static func holdsTheSame(_ url: URL, contents: BundleContents, recipients: Set<[UInt8]>, device: DeviceIdentity) -> Bool {
        guard let source = try? BundleFileSource(url: url),
              let stream = try? BundleStream(source: source, passphrase: nil, device: device),
              stream.metadata.senderDevice == contents.senderDevice, stream.metadata.signer == contents.signer,
              Set(stream.recipientIDs) == recipients, stream.recipientIDs.count == recipients.count,
              contents.created - stream.metadata.created < bundleRefreshMillis,
              stream.metadata.itemCount == Int64(contents.items.count), stream.metadata.defaultCount == Int64(contents.defaults.count),
              stream.metadata.revocationCount == Int64(contents.revocations.count)
        else { return false }
        var items = contents.items[...], defaults = contents.defaults[...]
        do {
            while let chunk = try stream.next() {
                switch chunk {
                case .revocations(let read):
                    guard read == contents.revocations else { return false }
                case .items(let read):
                    guard items.starts(with: read) else { return false }
                    items = items.dropFirst(read.count)
                case .defaults(let read):
                    guard defaults.starts(with: read) else { return false }
                    defaults = defaults.dropFirst(read.count)
                }
            }
        } catch {
            return false
        }
        return items.isEmpty && defaults.isEmpty
    }

    /// What ``SyncDevice/importBundle(from:passphrase:dryRun:progress:)`` does.
    @discardableResult
    func importBundle(
        from url: URL, passphrase: String? = nil, dryRun: Bool = false, progress: ((Int, Int) -> Void)? = nil
    ) throws -> ImportReport {
        let device = try deviceIdentity(settling: false)
        let now = clock.now()
        // Two passes over the file, each holding one chunk at a time. The first checks everything
        // (the signer's trust before any item is decrypted, then every chunk, the counts and the
        // signature) and keeps nothing but the newest clock reading; the second merges, inside the
        // transaction, and checks it all again, so a file changed in between rolls back.
        let first = try BundleStream(source: try BundleFileSource(url: url), passphrase: passphrase, device: device)
        let metadata = first.metadata
        if let signer = metadata.signer {
            try repository.read { try Self.checkTrust(signer, device: device, keys: keys, in: $0) }
        }
        // Clock skew is judged per writer, and age by the newest reading (BundleAcceptance).
        var acceptance = BundleAcceptance(sender: metadata.senderDevice, created: metadata.created, now: now)
        var newest: HybridTimestamp?
        func check(_ stamp: HybridTimestamp) throws {
            guard try acceptance.accepts(stamp) else { return }
            if newest.map({ $0 < stamp }) ?? true { newest = stamp }
        }
        while let chunk = try first.next() {
            switch chunk {
            case .revocations(let statements):
                guard statements.allSatisfy(\.verifies) else { throw BundleFormat.invalid("a revocation's signature does not verify") }
            case .items(let items): for item in items { try check(item.stamp) }
            case .defaults(let defaults): for choice in defaults { try check(choice.stamp) }
            }
        }
        try acceptance.checkAge(newest: newest)
        let reuse = (header: first.headerBytes, fileKey: first.fileKey)
        let expectedMetadata = first.metadataPlaintext
        let total = Int(metadata.itemCount)

        // A bundle this large makes one very large transaction: its pages spill to the WAL rather
        // than fill a 32 MiB cache and a 256 MiB map of the store (docs/reliability.md).
        let bundleBytes = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
        return try mutate(origin: .syncImport, dryRun: dryRun, smallPageCache: bundleBytes > Self.largeImportBytes) { mutation in
            let stream = try BundleStream(source: try BundleFileSource(url: url), passphrase: passphrase, device: device, reuse: reuse)
            guard stream.metadataPlaintext == expectedMetadata else { throw BundleFormat.invalid("it changed while it was being read") }
            // A merge decides by the registers, the clock and the trusted keys: all against the seal
            // first (a deleted tombstone would let a removed credential come back).
            try checkEveryRow(mutation.transaction, keys: mutation.keys)
            if let signer = metadata.signer {
                try Self.checkTrust(signer, device: device, keys: mutation.keys, in: mutation.transaction)
            }
            let stale = try Self.staleness(of: metadata, device: device, keys: mutation.keys, in: mutation.transaction, now: now)
            // When stale, which items the bundle carries: what it lacks may have been deleted there.
            var carried: Set<[UInt8]> = []
            try mutation.ledger.dropExpiredTombstones()
            try mutation.dropExpiredKeptVersions()
            mutation.concurrency = try Self.concurrentEditRule(metadata, device: device, keys: mutation.keys, in: mutation.transaction)
            if let newest { try mutation.ledger.receive(newest) }
            let keys = mutation.keys
            // An item announces and logs at most one change, and so does the settling of a space.
            mutation.reserveChanges(total + Int(metadata.defaultCount))

            // What a space needs settled once every chunk is in: the register the import replaced,
            // or else whether the user the space's register names arrived (a register may name a
            // user that only a later chunk, or an earlier bundle, brought). A few fields a space,
            // however many of its users arrive: not a list of them.
            var pending: [BlindIndex: PendingSpace] = [:]
            var report = ImportReport()
            report.clocksAhead = acceptance.clocksAheadNames
            var merged = 0
            // A bundle that relays its own signer's revocation merges nothing more of that signer's.
            var signerRevoked = false
            while let chunk = try stream.next() {
                switch chunk {
                case .revocations(let statements):
                    report.revocations = try mutation.applyRevocations(statements, device: device)
                    signerRevoked = report.revocations.contains { $0.key == metadata.signer }
                case .items where signerRevoked, .defaults where signerRevoked:
                    continue
                case .items(let chunkItems):
                    // Every table an import writes is keyed by blind indexes, which scatter the
                    // bundle's order at random: merged in key order instead (chunk by chunk),
                    // SQLite appends to its B-trees rather than splitting pages all over them. The
                    // order breaks ties by bundle position, so several entries of one key (which
                    // only a doctored bundle holds) still apply in bundle order. The positions are
                    // sorted, not the items: an item is large, and a sort moves what it sorts.
                    var spaceIndexes: [BlindIndex] = [], userIndexes: [BlindIndex] = []
                    spaceIndexes.reserveCapacity(chunkItems.count)
                    userIndexes.reserveCapacity(chunkItems.count)
                    var heldBack: [Bool] = []
                    heldBack.reserveCapacity(chunkItems.count)
                    for item in chunkItems {
                        heldBack.append(try acceptance.holdsBack(item.stamp))
                        let spaceIndex = keys.spaceIndex(item.space)
                        let userIndex = keys.userIndex(spaceIndex: spaceIndex, user: item.user)
                        spaceIndexes.append(spaceIndex)
                        userIndexes.append(userIndex)
                        if stale != nil { carried.insert(spaceIndex.bytes + userIndex.bytes) }
                    }
                    let order = chunkItems.indices.sorted { a, b in
                        if spaceIndexes[a] != spaceIndexes[b] { return spaceIndexes[a] < spaceIndexes[b] }
                        if userIndexes[a] != userIndexes[b] { return userIndexes[a] < userIndexes[b] }
                        return a < b
                    }
                    for position in order {
                        let (spaceIndex, userIndex, item) = (spaceIndexes[position], userIndexes[position], chunkItems[position])
                        if let progress, merged % 1024 == 0 { progress(merged, total) }
                        merged += 1
                        if heldBack[position] {
                            report.heldBack += 1
                            continue
                        }
                        if let stale, try mutation.isStaleArrival(item, spaceIndex: spaceIndex, userIndex: userIndex, peer: stale) {
                            try mutation.refuseStale(item, spaceIndex: spaceIndex, userIndex: userIndex)
                            report.dropped.append(DroppedCredential(space: item.space, user: item.user))
                            continue
                        }
                        let outcome = try mutation.merge(item, spaceIndex: spaceIndex, userIndex: userIndex)
                        switch outcome {
                        case .added: report.added += 1
                        case .updated: report.updated += 1
                        case .removed: report.removed += 1
                        case .unchanged: report.unchanged += 1
                        }
                        guard outcome != .unchanged else { continue }
                        var entry = try pending[spaceIndex] ?? PendingSpace(
                            space: item.space, registerUser: mutation.ledger.defaultChoice(spaceIndex: spaceIndex)?.user)
                        if outcome == .removed {
                            if entry.arrival?.userIndex == userIndex { entry.arrival = nil }
                        } else if entry.replaced == nil, entry.registerUser == item.user {
                            entry.arrival = (item.user, userIndex)
                        }
                        pending[spaceIndex] = entry
                    }
                case .defaults(let chunkDefaults):
                    let heldBack = try chunkDefaults.map { try acceptance.holdsBack($0.stamp) }
                    let spaceIndexes = chunkDefaults.map { keys.spaceIndex($0.space) }
                    let order = chunkDefaults.indices.sorted { a, b in
                        spaceIndexes[a] != spaceIndexes[b] ? spaceIndexes[a] < spaceIndexes[b] : a < b
                    }
                    for position in order where !heldBack[position] {
                        let (spaceIndex, register) = (spaceIndexes[position], chunkDefaults[position])
                        guard let replaced = try mutation.merge(register, spaceIndex: spaceIndex) else { continue }
                        var entry = pending[spaceIndex] ?? PendingSpace(space: register.space, registerUser: nil)
                        entry.replaced = replaced
                        pending[spaceIndex] = entry
                    }
                }
            }
            if let stale { report.dropped += try mutation.withdrawStaleItems(missingFrom: carried, peer: stale) }
            for spaceIndex in pending.keys.sorted() {
                let entry = pending[spaceIndex]!
                try mutation.settleDefault(of: entry.space, spaceIndex: spaceIndex, replacedRegister: entry.replaced, arrival: entry.arrival)
            }
            if let signer = metadata.signer, signer != device.publicKey {
                let index = keys.trustedKeyIndex(signer)
                if !signerRevoked, let sealed = try mutation.transaction.trustedDevice(keyIndex: index),
                   var record = keys.decryptTrustedDevice(keyIndex: index, sealed: sealed), record.isTrusted {
                    let mergedAt = clock.now()
                    record.lastMerged = mergedAt
                    let created = min(metadata.created, mergedAt + SyncWindows.maximumClockSkew)
                    record.lastMergedCreated = max(record.lastMergedCreated ?? created, created)
                    // What the device says it merged of this store's: this store's clock, never ahead of it.
                    if let own = metadata.merged.first(where: { $0.device == device.publicKey }) {
                        let merged = min(own.created, mergedAt)
                        record.mergedOwnBundle = max(record.mergedOwnBundle ?? merged, merged)
                    }
                    try mutation.transaction.addTrustedDevice(keyIndex: index, sealedPublicKey: keys.encryptTrustedDevice(record))
                }
            }
            progress?(total, total)
            report.conflicts = mutation.conflicts
            return report
        }
    }

    /// What an import keeps of a space it changed, until it settles the space's default choice.
    private struct PendingSpace {
        var space: ProtectionSpace
        /// The user the space's register named before the import (nil: none, or no user).
        var registerUser: String?
        /// That user, when the import wrote its synchronizable credential.
        var arrival: (user: String, userIndex: BlindIndex)?
        /// The register the import wrote for the space, if it replaced the local one.
        var replaced: SyncDefaultState?

        init(space: ProtectionSpace, registerUser: String?) {
            self.space = space
            self.registerUser = registerUser
        }
    }

    /// The bundle size above which an import runs with a small page cache and no memory map.
    static let largeImportBytes = 64 << 20

    /// The rule that tells a merge which replaced local values lost a concurrent edit: read before
    /// the import records this merge of the signer's bundle.
    private static func concurrentEditRule(
        _ metadata: BundleMetadata, device: DeviceIdentity, keys: StoreKeyring, in transaction: any CredentialRepositoryReading
    ) throws -> ConcurrentEditRule {
        var lastMerged: Int64?
        if let signer = metadata.signer, let sealed = try transaction.trustedDevice(keyIndex: keys.trustedKeyIndex(signer)) {
            lastMerged = keys.decryptTrustedDevice(keyIndex: keys.trustedKeyIndex(signer), sealed: sealed)?.lastMerged
        }
        return ConcurrentEditRule(device: device.deviceID, sender: metadata.signer == nil ? nil : metadata.senderDevice, lastMergedFromSender: lastMerged)
    }

    /// Whether this store is stale with respect to the bundle's signer (``StalePeer``): read
    /// before the import records this merge. Passphrase bundles and this store's own are never.
    private static func staleness(
        of metadata: BundleMetadata, device: DeviceIdentity, keys: StoreKeyring, in transaction: any CredentialRepositoryReading, now: Int64
    ) throws -> StalePeer? {
        guard let signer = metadata.signer, signer != device.publicKey else { return nil }
        let index = keys.trustedKeyIndex(signer)
        guard let sealed = try transaction.trustedDevice(keyIndex: index) else { return nil }
        return StalePeer(lastMerged: keys.decryptTrustedDevice(keyIndex: index, sealed: sealed)?.lastMerged, now: now)
    }

    /// Refuses a bundle signed by a device this store does not trust (its own is trusted), or
    /// has revoked, saying which and by whom.
    private static func checkTrust(_ signer: DeviceKey, device: DeviceIdentity, keys: StoreKeyring, in transaction: any CredentialRepositoryReading) throws {
        guard signer != device.publicKey else { return }
        let index = keys.trustedKeyIndex(signer)
        let record = try transaction.trustedDevice(keyIndex: index).flatMap { keys.decryptTrustedDevice(keyIndex: index, sealed: $0) }
        if let revocation = record?.revocation {
            let by = revocation.revoker == device.publicKey ? "this store" : "\(revocation.revoker)"
            throw CredentialStorageError(.bundleNotForThisStore,
                "the bundle is signed by a revoked device (\(signer), revoked by \(by) on \(DeviceRevocation(revocation).revoked.formatted(.iso8601)))")
        }
        guard record?.publicKey == signer else {
            throw CredentialStorageError(.bundleNotForThisStore,
                "the bundle is signed by a device this store does not trust (\(signer))")
        }
    }

    /// This store's device identity, created (in its own transaction, folded into the table
    /// seal) on first need, and replaced when it was made on another machine or in another home
    /// (``settleDeviceIdentity()``) unless `settling` is false: reading a bundle with the key the
    /// store holds (an import) publishes nothing, so it leaves the replacing to the next use that
    /// names, signs or seals to this device.
    func deviceIdentity(settling: Bool = true) throws -> DeviceIdentity {
        try settledDeviceIdentity(settling: settling).identity
    }
}
