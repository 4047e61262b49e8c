public import CredentialStoreCore
public import Foundation

/// This store as a member of a fleet, reached as ``CredentialStorage/sync``: its device key,
/// the devices it trusts and has revoked, the bundles it writes and merges, and the versions a
/// merge kept of what it replaced.
///
/// docs/sync-format.md describes the bundles and how they merge.
public struct SyncDevice: Sendable {
    /// The store this is the fleet member of.
    let storage: CredentialStorage

    /// This store's device key, which other stores export to and trust.
    public var deviceKey: DeviceKey {
        get throws { try storage.deviceKey }
    }

    /// This store's device id, in hex: it breaks ties between changes made in the same millisecond.
    public var deviceID: String {
        get throws { try storage.deviceID }
    }

    /// Accepts signed bundles from the device with this key, and seals this store's later sync
    /// bundles to it. Trusting a device already trusted changes nothing.
    ///
    /// A revoked device (``revokedDevices()``) is trusted again, here only: this store stops
    /// relaying its revocation and ignores revocations of it made before now, while every other
    /// store that applied the revocation keeps it until it trusts the device itself.
    public func trust(_ key: DeviceKey) throws {
        try storage.trustDevice(key)
    }

    /// Revokes the device with this key: its bundles are refused from now on, and the bundles
    /// this store writes from now on are no longer sealed to it.
    ///
    /// The revocation is a statement signed with this store's device key that travels in its
    /// bundles: every store that trusts this one applies it on its next merge and relays it on,
    /// so once each machine has synced once, no bundle any of them writes is sealed to the revoked
    /// device. The revoked device cannot undo it; ``trust(_:)`` on a store brings it back there.
    ///
    /// What the device already received stays with it: every synchronizable password of every
    /// bundle it could open. Change those passwords at their services after revoking a lost
    /// or retired machine (docs/sync-format.md says what to rotate).
    ///
    /// - Throws: `notFound` when this store does not trust that device (or has revoked it already).
    public func untrust(_ key: DeviceKey) throws {
        try storage.untrustDevice(key)
    }

    /// The devices this store trusts, with when each was trusted and when a bundle it signed was
    /// last merged here, ordered by key.
    public func trustedDevices() throws -> [TrustedDevice] {
        try storage.trustedDevices()
    }

    /// The devices revoked here or by a device this store trusts, with who revoked each and when,
    /// ordered by key. Their bundles are refused and nothing this store writes is sealed to them.
    public func revokedDevices() throws -> [DeviceRevocation] {
        try storage.revokedDevices()
    }

    /// Applies the revocations that the bundles at `urls` carry, all of them, oldest first, before
    /// any of their credentials is merged: `credstore sync` calls it with every bundle of its
    /// folder, so that a revoked device's changes are refused even when its bundle comes first,
    /// and a revocation made before its revoker was itself revoked still counts. A bundle this
    /// store cannot open (not sealed to it, a passphrase bundle, damaged) is passed over here;
    /// ``importBundle(from:passphrase:dryRun:progress:)`` reports it. Only each bundle's header
    /// and revocations are read.
    ///
    /// - Returns: the revocations that took effect, as ``ImportReport/revocations`` reports them.
    @discardableResult
    public func applyRevocations(fromBundlesAt urls: [URL]) throws -> [DeviceRevocation] {
        try storage.applyRevocations(fromBundlesAt: urls)
    }

    /// Writes every synchronizable credential, deletion and default choice of this store to a
    /// bundle file (0600, replaced atomically). Nothing of another tier leaves the machine.
    ///
    /// A recipient-mode bundle this store wrote before, for the same recipients and with the
    /// same contents, is left as it is (until it is 30 days old): a folder that a
    /// file-sync engine or git carries then changes only when the fleet's state does.
    ///
    /// - Returns: whether the file was written.
    @discardableResult
    public func export(to url: URL, protection: BundleProtection) throws -> Bool {
        try storage.exportSynchronizable(to: url, protection: protection)
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
    /// Changes whose clock reading is more than 24 h ahead of this machine's are held back
    /// (``ImportReport/heldBack``); a store that has not merged the signer for more than 180 days
    /// drops what the signer may have deleted meanwhile (``ImportReport/dropped``); see
    /// docs/sync-format.md, "Merging a bundle".
    ///
    /// - Throws: `invalidBundle` (damaged, altered, truncated, not a regular file, asking for more
    ///   key derivation than export uses, or from a device whose own clock is more than 24 h
    ///   ahead), `bundleTooOld` (its newest clock reading older than 180 days),
    ///   `bundleNotForThisStore` (another recipient, or an untrusted signer),
    ///   `wrongKey` (a wrong or missing passphrase) or `unsupportedFormatVersion`; the store is then unchanged.
    @discardableResult
    public func importBundle(
        from url: URL, passphrase: String? = nil, dryRun: Bool = false, progress: ((Int, Int) -> Void)? = nil
    ) throws -> ImportReport {
        try storage.importBundle(from: url, passphrase: passphrase, dryRun: dryRun, progress: progress)
    }

    /// The most versions kept per credential; a new loser drops the oldest beyond it.
    public static let keptVersionsPerCredential = CredentialStorage.keptVersionsPerCredential

    /// The kept versions of `user`'s credential in `space`, newest replaced first; empty when none
    /// were kept, or all were replaced longer ago than deletions are remembered.
    ///
    /// The versions hold passwords: show one only when the user asks for it.
    ///
    /// - Throws: `tamperDetected` when the space's kept versions differ from those sealed.
    public func keptVersions(of user: String, in space: ProtectionSpace) throws -> [KeptVersion] {
        try storage.keptVersions(of: user, in: space)
    }

    /// Makes a kept version the credential again: an ordinary write (its password and details
    /// replace the current ones, synchronizable), which the next sync carries to every machine,
    /// where it wins as the newest change. The version stays kept.
    ///
    /// - Throws: as ``CredentialStorage/update(user:for:options:_:)`` does; `invalidInput` for a version that is
    ///   not a synchronizable credential, or when the credential is kept outside sync here now
    ///   (restoring would put it back in sync, and replace the value kept here).
    public func restore(_ version: KeptVersion) throws {
        try storage.restore(version)
    }

    /// Gives this store a new device identity if it was made on another machine or in another
    /// home (the store was copied or restored there), as every use of the identity does.
    ///
    /// Call it first where the news matters to the user (`credstore sync`, `credstore device
    /// show` print it): the returned renewal names the new key the other machines must trust.
    ///
    /// - Returns: the renewal, or nil when the identity was already this place's (or the store
    ///   was opened without a rollback anchor folder, which gives no place to compare).
    @discardableResult
    public func settleIdentity() throws -> DeviceRenewal? {
        try storage.settleDeviceIdentity()
    }

    /// Replaces this store's device identity with a new one, wherever it was made: for a copy of
    /// a store that goes on living beside the original (which `sync` refuses with
    /// `deviceIdentityShared`). The store keeps its credentials, trusted devices and sync state,
    /// and trusts the replaced key as another device; the other machines must trust the new key.
    public func resetIdentity() throws -> DeviceRenewal {
        try storage.resetDeviceIdentity()
    }

    /// Refuses (`deviceIdentityShared`) to let this store write its bundle at `url` (its name in
    /// a sync folder, `<device id>.csbundle`) when another live store with this store's identity
    /// wrote the file there: the state folder recorded another file as the last one written
    /// there with this identity (unless the file is older than that one: an old copy put back by
    /// the folder's transport), or recorded it as written by a store at another path that is
    /// still there and is this store (its store id: a new store made where this one was before a
    /// move is not a copy). A file no record speaks of (a first sync here) is this store's to replace, and
    /// so is one recorded as written by this store into another folder (copied from there).
    ///
    /// When the file is the one this store wrote, but the store went back since (a backup
    /// restored, an older copy accepted), the bundle holds synchronizable changes the store no
    /// longer has and that the other machines may not have merged yet: it is merged back first,
    /// so that writing the bundle again loses none of them.
    ///
    /// - Returns: what merging the store's own bundle back changed, when it was merged.
    @discardableResult
    public func check(bundleAt url: URL) throws -> ImportReport? {
        try storage.checkSyncBundle(at: url)
    }

    /// Records the bundle now at `url` as the last one this store wrote there, for
    /// ``check(bundleAt:)``. Best effort.
    public func record(bundleAt url: URL) {
        storage.recordSyncBundle(at: url)
    }
}

extension CredentialStorage {
    /// This store as a member of a fleet (``SyncDevice``).
    public var sync: SyncDevice {
        SyncDevice(storage: self)
    }
}
