import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

extension CredentialStorageError.Code {
    /// A sync folder holds a bundle bearing this store's device id that another live store with
    /// the same identity wrote (a copy of this store). Writing over it would lose that store's
    /// changes; ``SyncDevice/resetIdentity()`` gives this store an identity of its own.
    public static let deviceIdentityShared = CredentialStorageError.Code(rawValue: "deviceIdentityShared")
}

/// One identity per live store: a store opened for sync where its identity was not made takes a
/// new one, and a bundle another store with the same identity wrote is never overwritten.
extension CredentialStorage {
    /// The user's state folder, where the rollback anchors are: nil for a store opened without one.
    var stateFolder: URL? {
        anchor.map { URL(fileURLWithPath: $0.path, isDirectory: false).deletingLastPathComponent() }
    }

    /// What ``SyncDevice/settleIdentity()`` does.
    @discardableResult
    func settleDeviceIdentity() throws -> DeviceRenewal? {
        try settledDeviceIdentity().renewal
    }

    /// What ``SyncDevice/resetIdentity()`` does.
    func resetDeviceIdentity() throws -> DeviceRenewal {
        guard let renewal = try settledDeviceIdentity(renew: true).renewal else {
            throw CredentialStorageError(.io, "the device identity was not replaced")
        }
        return renewal
    }

    /// This store's identity for this place, made or replaced as ``settleDeviceIdentity()`` says.
    func settledDeviceIdentity(renew: Bool = false, settling: Bool = true) throws -> (identity: DeviceIdentity, renewal: DeviceRenewal?) {
        _ = try followRekey()
        let keys = keys
        let sealed = try repository.snapshotRead { reader in
            let device = try reader.device()
            // The identity and the clock are one leaf of the seal tree: a deleted identity is
            // tampering, not a reason to make a new one.
            let clock = try reader.syncClock()
            try checkLeaves([SealChecks.singletonsClaim(device: device, clock: clock, keys: keys)], reader: reader, keys: keys)
            return device
        }
        let place = settling || renew || sealed == nil ? stateFolder.flatMap { DevicePlace.current(stateFolder: $0) } : nil
        if !renew, let sealed {
            let identity = try DeviceIdentity(opening: sealed, keys: keys)
            if place == nil || identity.place == place { return (identity, nil) }
        }
        let (identity, replaced) = try mutate { try $0.ledger.device(settlingAt: place, renew: renew) }
        guard let replaced else { return (identity, nil) }
        let renewal = DeviceRenewal(id: identity.hexID, key: identity.publicKey, previousID: replaced.hexID, previousKey: replaced.publicKey)
        logger.notice("gave the store a new device identity", metadata: [
            "reason": "\(renew ? "asked for" : "made on another machine or in another home")",
            "device": "\(renewal.id)", "previous": "\(renewal.previousID)",
        ])
        return (identity, renewal)
    }

    /// What ``SyncDevice/check(bundleAt:)`` does.
    @discardableResult
    func checkSyncBundle(at url: URL) throws -> ImportReport? {
        guard let stateFolder else { return nil }
        let device = try deviceIdentity()
        var info = stat()
        guard lstat(url.path, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
              var record = SyncBundleRecord.read(SyncBundleRecord.location(stateFolder: stateFolder, folder: url.deletingLastPathComponent(), deviceID: device.deviceID)),
              let digest = SyncBundleRecord.digest(of: url)
        else { return nil }
        let storePath = StoreFiles.canonicalPath(databaseURL.path)
        // This folder's record speaks of another file: the file may still be one this store
        // wrote into another folder, and the user copied here.
        if digest != record.digest, let elsewhere = SyncBundleRecord.record(of: digest, in: stateFolder), elsewhere.storePath == storePath {
            record = elsewhere
        }
        let other: String
        if digest == record.digest {
            // A store at the recorded path is this one's copy only if it is this store (the same
            // store id): after a move, a new store made at the old path is another store, and the
            // bundle is this store's. One whose header cannot be read is taken for a copy.
            let anotherStoreThere = (try? Self.storeID(at: URL(fileURLWithPath: record.storePath))).map { $0 != header.storeID } ?? false
            guard record.storePath != storePath, FileManager.default.fileExists(atPath: record.storePath), !anotherStoreThere else {
                guard record.storePath == storePath, let written = record.generation, written > (try sealGeneration()) else { return nil }
                logger.notice("merging this store's own sync bundle back: the store is older than the bundle it wrote", metadata: ["bundle": "\(url.path)"])
                return try importBundle(from: url)
            }
            other = "the store at \(record.storePath), a copy of this one"
        } else {
            if let created = Self.bundleCreated(url, device: device), created < record.created { return nil }
            other = "another store with this store's device identity (a copy of it, on another machine or in another home, or a backup restored there)"
        }
        throw CredentialStorageError(.deviceIdentityShared,
            "\(url.path) was written by \(other), not by this store; two stores with one identity would overwrite each other's bundle and never merge it, so nothing was merged or written")
    }

    /// What ``SyncDevice/record(bundleAt:)`` does.
    func recordSyncBundle(at url: URL) {
        guard let stateFolder, let device = try? deviceIdentity(),
              let digest = SyncBundleRecord.digest(of: url), let created = Self.bundleCreated(url, device: device)
        else { return }
        SyncBundleRecord(digest: digest, created: created, storePath: StoreFiles.canonicalPath(databaseURL.path), generation: try? sealGeneration())
            .write(to: SyncBundleRecord.location(stateFolder: stateFolder, folder: url.deletingLastPathComponent(), deviceID: device.deviceID))
    }

    /// The store's seal generation as it stands: it only grows, but for a store put back.
    private func sealGeneration() throws -> Int64 {
        _ = try followRekey()
        let keys = keys
        return try repository.read { try TableSealing.stored($0, keys: keys, storeID: header.storeID).generation }
    }

    /// When the bundle at `url` says it was made, if this device can open it.
    private static func bundleCreated(_ url: URL, device: DeviceIdentity) -> Int64? {
        guard let source = try? BundleFileSource(url: url),
              let stream = try? BundleStream(source: source, passphrase: nil, device: device),
              stream.metadata.senderDevice == device.deviceID
        else { return nil }
        return stream.metadata.created
    }
}
