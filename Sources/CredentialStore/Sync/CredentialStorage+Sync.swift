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

    /// Accepts signed bundles from the device with this key.
    ///
    /// - Throws: `invalidInput` when the text is not a device key.
    public func trustDevice(_ publicKey: String) throws {
        let key = try DeviceIdentity.publicKey(fromText: publicKey)
        _ = try followRekey()
        _ = try repository.write({ transaction in
            try transaction.addTrustedDevice(keyIndex: keys.trustedKeyIndex(key), sealedPublicKey: keys.sealTrustedKey(key))
            return try TableSealing.fold(transaction, keys: keys, storeID: header.storeID)
        }, afterCommit: { generation in
            if let generation { anchor?.advance(to: generation) }
        })
    }

    /// The device keys this store trusts.
    public func trustedDevices() throws -> [String] {
        _ = try followRekey()
        let keys = keys
        return try repository.read { try $0.allTrustedDevices() }.map { entry in
            guard let key = keys.openTrustedKey(keyIndex: entry.keyIndex, sealed: entry.sealedPublicKey),
                  keys.trustedKeyIndex(key) == entry.keyIndex
            else { throw StoreKeys.tampered }
            return DeviceIdentity.text(of: key)
        }.sorted()
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
    /// - Parameters:
    ///   - passphrase: the bundle's passphrase, for a passphrase bundle.
    ///   - dryRun: computes the report and changes nothing.
    ///   - progress: called now and then with the items merged so far and the bundle's total,
    ///     for a progress display; it runs inside the import's transaction, so keep it quick.
    /// - Throws: `invalidBundle` (damaged, altered, truncated, too old, or from a clock more than
    ///   24 h ahead), `bundleNotForThisStore` (another recipient, or an untrusted signer),
    ///   `wrongKey` (wrong passphrase) or `unsupportedFormatVersion`; the store is then unchanged.
    @discardableResult
    public func importBundle(
        from url: URL, passphrase: String? = nil, dryRun: Bool = false, progress: ((Int, Int) -> Void)? = nil
    ) throws -> ImportReport {
        let bytes: [UInt8]
        do {
            bytes = [UInt8](try Data(contentsOf: url))
        } catch {
            throw CredentialStorageError(.notFound, "could not read the bundle \(url.path); check the path")
        }
        let device = try deviceIdentity()
        let contents = try BundleFormat.read(bytes, passphrase: passphrase, device: device)
        let now = Mutation.now()
        guard contents.created >= now - SyncLedger.tombstoneLifetimeMillis else {
            throw CredentialStorageError(.invalidBundle, "the bundle is older than 180 days, longer than deletions are remembered; export a fresh one")
        }
        let stamps = contents.items.map(\.stamp) + contents.defaults.map(\.stamp)
        guard stamps.allSatisfy(\.isPlausible) else {
            throw CredentialStorageError(.invalidBundle, "the bundle carries clock readings no working clock makes; it was altered or made by broken software")
        }
        let newest = max(contents.created, stamps.map(\.wall).max() ?? 0)
        guard newest <= now + Self.maximumClockSkewMillis else {
            throw CredentialStorageError(.invalidBundle, "the bundle comes from a clock more than 24 hours ahead of this machine's; fix the clock there and export again")
        }
        return try mutate(origin: .syncImport, dryRun: dryRun) { mutation in
            if let signer = contents.signer, signer != device.publicKey {
                let index = mutation.keys.trustedKeyIndex(signer)
                guard let sealed = try mutation.transaction.trustedDevice(keyIndex: index),
                      mutation.keys.openTrustedKey(keyIndex: index, sealed: sealed) == signer
                else {
                    throw CredentialStorageError(.bundleNotForThisStore,
                        "the bundle is signed by a device this store does not trust (\(DeviceIdentity.text(of: signer))); run `credstore device trust` with that key if it is yours")
                }
            }
            try mutation.ledger.dropExpiredTombstones()
            try mutation.receive(contents)
            let keys = mutation.keys
            // Every table an import writes is keyed by blind indexes, which scatter the bundle's
            // order at random: merged in key order instead, SQLite appends to its B-trees rather
            // than splitting pages all over them. The sorts are stable, so several entries of one
            // key (which only a doctored bundle holds) still apply in bundle order. A space's index
            // is computed per entry: a keyed hash costs less than a dictionary of spaces.
            let items = contents.items.map { item in
                let spaceIndex = keys.spaceIndex(item.space)
                return (spaceIndex: spaceIndex, userIndex: keys.userIndex(spaceIndex: spaceIndex, user: item.user), item: item)
            }.sorted { first, second in
                let spaces = compareKeys(first.spaceIndex, second.spaceIndex)
                return spaces == 0 ? compareKeys(first.userIndex, second.userIndex) < 0 : spaces < 0
            }
            let registers = contents.defaults.map { (spaceIndex: keys.spaceIndex($0.space), register: $0) }
                .sorted { compareKeys($0.spaceIndex, $1.spaceIndex) < 0 }

            // An item announces and logs at most one change, and so does the settling of a space.
            mutation.reserveChanges(items.count + registers.count)

            // Space by space: its items, then its registers, then its default, which settles once
            // every item of the space is in (a register may name a user that only this bundle, or
            // an earlier one, brought). What a merge reads and writes belongs to one space, so this
            // ends as merging every item first would, while the space's rows are still in cache.
            var report = ImportReport()
            var (nextItem, nextRegister) = (items.startIndex, registers.startIndex)
            while nextItem < items.endIndex || nextRegister < registers.endIndex {
                // The next space: the first in key order of the two lists' heads.
                let (spaceIndex, space) = nextRegister == registers.endIndex
                    || nextItem < items.endIndex && compareKeys(items[nextItem].spaceIndex, registers[nextRegister].spaceIndex) <= 0
                    ? (items[nextItem].spaceIndex, items[nextItem].item.space)
                    : (registers[nextRegister].spaceIndex, registers[nextRegister].register.space)
                var arrived: [(user: String, userIndex: [UInt8])] = []
                while nextItem < items.endIndex, compareKeys(items[nextItem].spaceIndex, spaceIndex) == 0 {
                    if let progress, nextItem % 1024 == 0 { progress(nextItem, items.count) }
                    let (item, userIndex) = (items[nextItem].item, items[nextItem].userIndex)
                    switch try mutation.merge(item, spaceIndex: spaceIndex, userIndex: userIndex) {
                    case .added: report.added += 1; arrived.append((item.user, userIndex))
                    case .updated: report.updated += 1; arrived.append((item.user, userIndex))
                    case .removed: report.removed += 1; arrived.removeAll { $0.userIndex == userIndex }
                    case .unchanged: report.unchanged += 1
                    }
                    nextItem += 1
                }
                var replacedRegister: SyncDefaultState?
                while nextRegister < registers.endIndex, compareKeys(registers[nextRegister].spaceIndex, spaceIndex) == 0 {
                    replacedRegister = try mutation.merge(registers[nextRegister].register, spaceIndex: spaceIndex) ?? replacedRegister
                    nextRegister += 1
                }
                if replacedRegister != nil || !arrived.isEmpty {
                    try mutation.settleDefault(of: space, spaceIndex: spaceIndex, replacedRegister: replacedRegister, arrived: arrived)
                }
            }
            progress?(items.count, items.count)
            return report
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
