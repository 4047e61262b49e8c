public import Foundation
import Logging

/// How an export bundle is protected.
public enum BundleProtection: Sendable, CustomStringConvertible {
    /// A passphrase, stretched with Argon2id (4 passes, 512 MiB: more than the local unlock, since
    /// a bundle can be attacked offline).
    case passphrase(String)
    /// The device keys (`csdev1:…`, from ``CredentialStorage/devicePublicKey``) of the stores that
    /// may open it. The bundle is signed with this store's device key.
    case recipients([String])

    /// `passphrase <redacted>` or the recipients' public keys: never the passphrase.
    public var description: String {
        switch self {
        case .passphrase: "passphrase <redacted>"
        case .recipients(let keys): "recipients \(keys)"
        }
    }
}

/// A device a store trusts, as ``CredentialStorage/trustedDeviceDetails()`` lists it.
public struct TrustedDevice: Hashable, Sendable {
    /// The device's key (`csdev1:…`), as ``CredentialStorage/devicePublicKey`` prints it there.
    public var publicKey: String
    /// When this store began to trust it; nil for devices trusted before stores kept the time.
    public var trusted: Date?
    /// When a bundle it signed was last merged here; nil if none was.
    public var lastMerged: Date?

    /// Creates a description of a trusted device.
    public init(publicKey: String, trusted: Date? = nil, lastMerged: Date? = nil) {
        self.publicKey = publicKey
        self.trusted = trusted
        self.lastMerged = lastMerged
    }
}

extension CredentialStorageError.Code {
    /// A sync bundle is older than deletions are remembered (180 days): merging it could bring
    /// back what was deleted since, so it is refused. `credstore sync` skips it with a note.
    public static let bundleTooOld = CredentialStorageError.Code(rawValue: "bundleTooOld")
}

/// What an import changed, item by item (credentials, not default choices).
public struct ImportReport: Hashable, Sendable, Codable {
    /// Items this store did not have.
    public var added: Int
    /// Items whose password or tier the bundle replaced.
    public var updated: Int
    /// Items the bundle's deletions removed.
    public var removed: Int
    /// Items this store already had as new or newer.
    public var unchanged: Int

    /// Creates a report.
    public init(added: Int = 0, updated: Int = 0, removed: Int = 0, unchanged: Int = 0) {
        self.added = added
        self.updated = updated
        self.removed = removed
        self.unchanged = unchanged
    }
}

/// Orders blind indexes as SQLite orders BLOB keys: bytewise, a prefix first. Negative, zero or
/// positive, like memcmp.
private func compareKeys(_ first: [UInt8], _ second: [UInt8]) -> Int {
    let common = min(first.count, second.count)
    let order = common == 0 ? 0 : first.withUnsafeBytes { a in
        second.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, common) }
    }
    return order != 0 ? Int(order) : first.count - second.count
}

extension CredentialStorage {
    /// How far ahead of this machine's clock a bundle's clock may be: more is a broken clock, and
    /// accepting it would let that machine win every later conflict.
    static let maximumClockSkewMillis: Int64 = 24 * 3600 * 1000

    /// This store's device key, which other stores export to and trust (`csdev1:` and base64url).
    public var devicePublicKey: String {
        get throws { DeviceIdentity.text(of: try deviceIdentity().publicKey) }
    }

    /// This store's device id, in hex: it breaks ties between changes made in the same millisecond.
    public var deviceID: String {
        get throws { try deviceIdentity().deviceID.map { String(format: "%02x", $0) }.joined() }
    }

    /// Checks that `publicKey` is a device key, as ``devicePublicKey`` prints one, without any
    /// store: a command can refuse a mistyped key before it opens, or creates, a store.
    ///
    /// - Throws: `invalidInput` when the text is not a device key.
    public static func validateDeviceKey(_ publicKey: String) throws {
        _ = try DeviceIdentity.publicKey(fromText: publicKey)
    }

    /// Accepts signed bundles from the device with this key, and seals this store's later sync
    /// bundles to it. Trusting a device already trusted changes nothing.
    ///
    /// - Throws: `invalidInput` when the text is not a device key.
    public func trustDevice(_ publicKey: String) throws {
        let key = try DeviceIdentity.publicKey(fromText: publicKey)
        _ = try followRekey()
        _ = try repository.write({ transaction -> Int64? in
            let index = keys.trustedKeyIndex(key)
            if let sealed = try transaction.trustedDevice(keyIndex: index), keys.openTrustedKey(keyIndex: index, sealed: sealed) == key {
                return nil
            }
            try transaction.addTrustedDevice(keyIndex: index, sealedPublicKey: keys.sealTrustedKey(key, trusted: Mutation.now()))
            return try TableSealing.fold(transaction, keys: keys, storeID: header.storeID)
        }, afterCommit: { generation in
            if let generation { anchor?.advance(to: generation) }
        })
    }

    /// Stops trusting the device with this key: its bundles are refused from now on, and the
    /// bundles this store's `sync` writes from now on are no longer sealed to it.
    ///
    /// What the device already received stays with it: every synchronizable password of every
    /// bundle it could open. Change those passwords at their services after untrusting a lost
    /// or retired machine (docs/sync-format.md says what to rotate).
    ///
    /// - Throws: `invalidInput` when the text is not a device key, `notFound` when this store
    ///   does not trust that device.
    public func untrustDevice(_ publicKey: String) throws {
        let key = try DeviceIdentity.publicKey(fromText: publicKey)
        _ = try followRekey()
        _ = try repository.write({ transaction -> Int64? in
            let index = keys.trustedKeyIndex(key)
            guard try transaction.trustedDevice(keyIndex: index) != nil else {
                throw CredentialStorageError(.notFound, "this store does not trust that device; `credstore device list` shows the ones it does")
            }
            try transaction.removeTrustedDevice(keyIndex: index)
            return try TableSealing.fold(transaction, keys: keys, storeID: header.storeID)
        }, afterCommit: { generation in
            if let generation { anchor?.advance(to: generation) }
        })
    }

    /// The device keys this store trusts.
    public func trustedDevices() throws -> [String] {
        try trustedDeviceDetails().map(\.publicKey)
    }

    /// The devices this store trusts, with when each was trusted and when a bundle it signed was
    /// last merged here, ordered by key.
    public func trustedDeviceDetails() throws -> [TrustedDevice] {
        _ = try followRekey()
        let keys = keys
        return try repository.read { try $0.allTrustedDevices() }.map { entry in
            guard let record = keys.openTrustedDevice(keyIndex: entry.keyIndex, sealed: entry.sealedPublicKey) else { throw StoreKeys.tampered }
            return TrustedDevice(
                publicKey: DeviceIdentity.text(of: record.publicKey),
                trusted: record.trusted.map { Date(timeIntervalSince1970: Double($0) / 1000) },
                lastMerged: record.lastMerged.map { Date(timeIntervalSince1970: Double($0) / 1000) })
        }.sorted { $0.publicKey < $1.publicKey }
    }

    /// Writes every synchronizable credential, deletion and default choice of this store to a
    /// bundle file (0600, replaced atomically). Nothing of another tier leaves the machine.
    public func exportSynchronizable(to url: URL, protection: BundleProtection) throws {
        let bundleProtection: BundleFormat.Protection
        switch protection {
        case .passphrase(let passphrase): bundleProtection = .passphrase(passphrase)
        case .recipients(let texts): bundleProtection = .recipients(try texts.map(DeviceIdentity.publicKey(fromText:)))
        }
        let device = try deviceIdentity()
        // Through `mutate`: the expiry of old tombstones is folded into the table seal.
        let contents = try mutate { mutation -> BundleContents in
            let (transaction, keys) = (mutation.transaction, mutation.keys)
            try mutation.ledger.dropExpiredTombstones()
            // A synchronizable credential without a live register would silently stay home, and a
            // live register without its credential would send nothing: either is tampering.
            let unpaired = try transaction.unpairedSyncItems()
            guard unpaired.credentials.isEmpty, unpaired.registers.isEmpty else {
                throw TableSealing.unpaired("\(unpaired.credentials.count) credentials without a register, \(unpaired.registers.count) registers without a credential")
            }
            var items: [BundleItem] = []
            for sealed in try transaction.allSyncItems() {
                let state = try keys.open(sealed)
                var password: String?
                if !state.deleted {
                    guard let row = try transaction.credential(space: sealed.spaceIndex, user: sealed.userIndex),
                          row.persistence == .synchronizable
                    else { throw TableSealing.unpaired("a live register without its credential") }
                    password = try keys.openCredential(row).password
                }
                items.append(BundleItem(space: state.space, user: state.user, stamp: state.stamp, password: password))
            }
            let defaults = try transaction.allSyncDefaults().map { sealed in
                let state = try keys.open(sealed)
                return BundleDefault(space: state.space, user: state.user, stamp: state.stamp)
            }
            return BundleContents(
                senderDevice: device.deviceID, signer: device.publicKey, created: Mutation.now(), items: items, defaults: defaults)
        }
        let bytes = try BundleFormat.write(contents, protection: bundleProtection, signer: device)
        try StoreFiles.writeAtomically(url, bytes: bytes)
        logger.debug("exported a sync bundle", metadata: ["items": "\(contents.items.count)"])
    }

    /// Merges a bundle into this store: last writer wins per item and per default choice, under
    /// the hybrid logical clocks of the machines involved. The import is atomic and idempotent,
    /// and imports in any order converge to the same state.
    ///
    /// The file is read one chunk at a time, twice (once to check it all, once to merge), so
    /// memory follows the largest chunk, not the bundle. Only a regular file is read.
    ///
    /// - Parameters:
    ///   - url: the bundle file.
    ///   - passphrase: the bundle's passphrase, for a passphrase bundle.
    ///   - dryRun: computes the report and changes nothing.
    ///   - progress: called now and then with the items merged so far and the bundle's total,
    ///     for a progress display; it runs inside the import's transaction, so keep it quick.
    /// - Throws: `invalidBundle` (damaged, altered, truncated, not a regular file, asking for more
    ///   key derivation than export uses, or from a clock more than 24 h ahead), `bundleTooOld`
    ///   (older than 180 days), `bundleNotForThisStore` (another recipient, or an untrusted signer),
    ///   `wrongKey` (wrong passphrase) or `unsupportedFormatVersion`; the store is then unchanged.
    @discardableResult
    public func importBundle(
        from url: URL, passphrase: String? = nil, dryRun: Bool = false, progress: ((Int, Int) -> Void)? = nil
    ) throws -> ImportReport {
        let device = try deviceIdentity()
        let now = Mutation.now()
        // Two passes over the file, each holding one chunk at a time. The first checks everything
        // (the signer's trust before any item is decrypted, then every chunk, the counts and the
        // signature) and keeps nothing but the newest clock reading; the second merges, inside the
        // transaction, and checks it all again, so a file changed in between rolls back.
        let first = try BundleStream(source: try BundleFileSource(url: url), passphrase: passphrase, device: device)
        let metadata = first.metadata
        guard metadata.created >= now - SyncLedger.tombstoneLifetimeMillis else {
            throw CredentialStorageError(.bundleTooOld, "the bundle is older than 180 days, longer than deletions are remembered; export a fresh one")
        }
        if let signer = metadata.signer {
            try repository.read { try Self.checkTrust(signer, device: device, keys: keys, in: $0) }
        }
        var newest: HybridTimestamp?
        func check(_ stamp: HybridTimestamp) throws {
            guard stamp.isPlausible else {
                throw CredentialStorageError(.invalidBundle, "the bundle carries clock readings no working clock makes; it was altered or made by broken software")
            }
            guard stamp.wall <= now + Self.maximumClockSkewMillis else {
                throw CredentialStorageError(.invalidBundle, "the bundle comes from a clock more than 24 hours ahead of this machine's; fix the clock there and export again")
            }
            if newest.map({ $0 < stamp }) ?? true { newest = stamp }
        }
        guard metadata.created <= now + Self.maximumClockSkewMillis else {
            throw CredentialStorageError(.invalidBundle, "the bundle comes from a clock more than 24 hours ahead of this machine's; fix the clock there and export again")
        }
        while let chunk = try first.next() {
            switch chunk {
            case .items(let items): for item in items { try check(item.stamp) }
            case .defaults(let defaults): for choice in defaults { try check(choice.stamp) }
            }
        }
        let reuse = (header: first.headerBytes, fileKey: first.fileKey)
        let expectedMetadata = first.metadataPlaintext
        let total = Int(metadata.itemCount)

        return try mutate(origin: .syncImport, dryRun: dryRun) { mutation in
            let stream = try BundleStream(source: try BundleFileSource(url: url), passphrase: passphrase, device: device, reuse: reuse)
            guard stream.metadataPlaintext == expectedMetadata else { throw BundleFormat.invalid("it changed while it was being read") }
            if let signer = metadata.signer {
                try Self.checkTrust(signer, device: device, keys: mutation.keys, in: mutation.transaction)
            }
            try mutation.ledger.dropExpiredTombstones()
            if let newest { try mutation.ledger.receive(newest) }
            let keys = mutation.keys
            // An item announces and logs at most one change, and so does the settling of a space.
            mutation.reserveChanges(min(total, 1 << 16) + min(Int(metadata.defaultCount), 1 << 16))

            // What a space needs settled once every chunk is in: the users whose credential the
            // import wrote, and the register it replaced (a register may name a user that only a
            // later chunk, or an earlier bundle, brought).
            var pending: [[UInt8]: (space: ProtectionSpace, arrived: [(user: String, userIndex: [UInt8])], replaced: SyncDefaultState?)] = [:]
            var report = ImportReport()
            var merged = 0
            while let chunk = try stream.next() {
                switch chunk {
                case .items(let chunkItems):
                    // Every table an import writes is keyed by blind indexes, which scatter the
                    // bundle's order at random: merged in key order instead (chunk by chunk),
                    // SQLite appends to its B-trees rather than splitting pages all over them. The
                    // sort is stable, so several entries of one key (which only a doctored bundle
                    // holds) still apply in bundle order.
                    let items = try chunkItems.map { item in
                        guard item.stamp.isPlausible, item.stamp.wall <= now + Self.maximumClockSkewMillis else {
                            throw BundleFormat.invalid("it changed while it was being read")
                        }
                        let spaceIndex = keys.spaceIndex(item.space)
                        return (spaceIndex: spaceIndex, userIndex: keys.userIndex(spaceIndex: spaceIndex, user: item.user), item: item)
                    }.sorted { first, second in
                        let spaces = compareKeys(first.spaceIndex, second.spaceIndex)
                        return spaces == 0 ? compareKeys(first.userIndex, second.userIndex) < 0 : spaces < 0
                    }
                    for (spaceIndex, userIndex, item) in items {
                        if let progress, merged % 1024 == 0 { progress(merged, total) }
                        merged += 1
                        let outcome = try mutation.merge(item, spaceIndex: spaceIndex, userIndex: userIndex)
                        switch outcome {
                        case .added: report.added += 1
                        case .updated: report.updated += 1
                        case .removed: report.removed += 1
                        case .unchanged: report.unchanged += 1
                        }
                        guard outcome != .unchanged else { continue }
                        var entry = pending[spaceIndex] ?? (item.space, [], nil)
                        if outcome == .removed {
                            entry.arrived.removeAll { $0.userIndex == userIndex }
                        } else {
                            entry.arrived.append((item.user, userIndex))
                        }
                        pending[spaceIndex] = entry
                    }
                case .defaults(let chunkDefaults):
                    let registers = try chunkDefaults.map { choice in
                        guard choice.stamp.isPlausible, choice.stamp.wall <= now + Self.maximumClockSkewMillis else {
                            throw BundleFormat.invalid("it changed while it was being read")
                        }
                        return (spaceIndex: keys.spaceIndex(choice.space), register: choice)
                    }.sorted { compareKeys($0.spaceIndex, $1.spaceIndex) < 0 }
                    for (spaceIndex, register) in registers {
                        guard let replaced = try mutation.merge(register, spaceIndex: spaceIndex) else { continue }
                        var entry = pending[spaceIndex] ?? (register.space, [], nil)
                        entry.replaced = replaced
                        pending[spaceIndex] = entry
                    }
                }
            }
            for spaceIndex in pending.keys.sorted(by: { compareKeys($0, $1) < 0 }) {
                let entry = pending[spaceIndex]!
                try mutation.settleDefault(of: entry.space, spaceIndex: spaceIndex, replacedRegister: entry.replaced, arrived: entry.arrived)
            }
            if let signer = metadata.signer, signer != device.publicKey {
                let index = keys.trustedKeyIndex(signer)
                if let sealed = try mutation.transaction.trustedDevice(keyIndex: index), let record = keys.openTrustedDevice(keyIndex: index, sealed: sealed) {
                    try mutation.transaction.addTrustedDevice(
                        keyIndex: index, sealedPublicKey: keys.sealTrustedKey(signer, trusted: record.trusted, lastMerged: Mutation.now()))
                }
            }
            progress?(total, total)
            return report
        }
    }

    /// Refuses a bundle signed by a device this store does not trust (its own is trusted).
    private static func checkTrust(_ signer: [UInt8], device: DeviceIdentity, keys: StoreKeys, in transaction: any CredentialRepositoryReading) throws {
        guard signer != device.publicKey else { return }
        let index = keys.trustedKeyIndex(signer)
        guard let sealed = try transaction.trustedDevice(keyIndex: index), keys.openTrustedKey(keyIndex: index, sealed: sealed) == signer else {
            throw CredentialStorageError(.bundleNotForThisStore,
                "the bundle is signed by a device this store does not trust (\(DeviceIdentity.text(of: signer))); run `credstore device trust` with that key if it is yours")
        }
    }

    /// This store's device identity, created (in its own transaction, folded into the table
    /// seal) on first need.
    func deviceIdentity() throws -> DeviceIdentity {
        _ = try followRekey()
        let keys = keys
        if let sealed = try repository.read({ try $0.device() }) {
            return DeviceIdentity(deviceID: sealed.deviceID, publicKey: sealed.publicKey, secretKey: try keys.openDeviceSecret(sealed))
        }
        return try mutate { try $0.ledger.device() }
    }
}
