package import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
public import Foundation
package import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A persistent, encrypted credential store keyed by protection space: the
/// `URLCredentialStorage` that Linux lacks.
///
/// ```swift
/// let storage = try CredentialStorage()
/// let space = try ProtectionSpace(url: URL(string: "https://api.example.com")!)
/// try storage.set(Credential(user: "alice", password: "s3cret", persistence: .permanent), for: space)
/// let credential = try storage.defaultCredential(for: space)
/// ```
///
/// Credentials are kept per user per space, in the tier their ``/CredentialStoreCore/Persistence`` names. Permanent
/// and synchronizable ones are sealed field by field (XChaCha20-Poly1305) in an SQLite file and
/// found through keyed blind indexes. A read returns the right credential or throws; it never
/// returns wrong data.
///
/// The storage is `Sendable`: use one instance from any number of tasks and threads. Several
/// processes may open the same store file at once; each sees the others' committed changes, and
/// ``changes()`` announces them.
///
/// ## Topics
/// ### Opening a store
/// - ``init(at:key:options:)``
/// - ``StoreLocation``
/// - ``StorageOptions``
/// - ``/CredentialStoreCore/StoreKey``
/// ### Storing and removing
/// - ``set(_:for:options:)``
/// - ``update(user:for:options:_:)``
/// - ``remove(user:for:options:)``
/// - ``RemovalOptions``
/// ### Listing
/// - ``entries(matching:)``
/// ### Reading
/// - ``credentials(for:)``
/// - ``allCredentials()``
/// ### Defaults
/// - ``defaultCredential(for:)``
/// - ``defaultCredential(answering:)``
/// - ``CredentialRequest``
/// - ``CredentialMatch``
/// - ``setDefault(user:for:)``
/// - ``setDefaultCredential(_:for:options:)``
/// ### Observing
/// - ``changes()``
/// - ``CredentialChange``
/// ### Beyond passwords
/// - ``tls``
/// - ``sync``
/// - ``maintenance``
public final class CredentialStorage: Sendable {
    /// The store's database file.
    public let databaseURL: URL

    let repository: SQLiteRepository
    let keyHolder: KeyHolder
    let header: StoreHeader
    /// Also the challenge bridge's, which logs what it declined where the store logs.
    package let logger: Logger
    /// Names this instance in the change log, so the watcher skips its own writes.
    let instanceID: [UInt8]
    private let session = Mutex(SessionTier())
    private let hub: ChangeHub
    private let announcementLimit = Atomic<Int>(Mutation.announcementCap)

    /// The most changes of one write this instance keeps in memory to announce; a write that
    /// changes more reads them back from the change log after its commit. A test lowers it to
    /// reach that path with a few items.
    package var announcementCap: Int {
        get { announcementLimit.load(ordering: .relaxed) }
        set { announcementLimit.store(newValue, ordering: .relaxed) }
    }
    /// Told each new table-seal generation once it is committed.
    let anchor: AnchorFile?
    /// What this instance has checked of the seal tree, for its lookups; nil for a store without
    /// one (only a test migrates a store part of the way).
    let sealChecks: SealChecks?
    /// Where every write and sync decision of this instance reads the time.
    let clock: any StoreClock

    /// The `userInfo` key under which a posted `credentialStorageChanged` notification carries
    /// its ``CredentialChange``.
    public static let changeUserInfoKey = "CredentialChange"

    /// Opens the store at `location`, creating it (and its key file, for a key-file store) if it
    /// does not exist yet; with no argument, the user's default store
    /// (``StoreLocation/standard(environment:)``).
    ///
    /// - Parameters:
    ///   - location: Where the store's files are.
    ///   - key: What unlocks it: nil for the location's key file
    ///     (``/CredentialStoreCore/StoreKey/keyFile(_:)`` of ``StoreLocation/keyFileURL``), or a
    ///     passphrase, or the unlocked session of a passphrase store.
    ///   - options: The logger, what opening checks, and the rollback anchor.
    /// - Throws: ``/CredentialStoreCore/CredentialStorageError`` with code `wrongKey`, `corrupt`, `permissionsTooOpen`,
    ///   `notFound` (an existing store whose key file is missing), `unsupportedFormatVersion` or `io`.
    ///
    /// Opening checks the table seal's MAC, in constant time whatever the store's size; every
    /// read then checks the rows it returns against the seal's tree, so a row deleted, restored
    /// from an older copy, or copied in from another store throws `tamperDetected` where it is
    /// read (see ``IntegrityCheck``).
    ///
    /// A store older than its ``RollbackAnchor`` (a copy of the whole file from before later
    /// writes, put back) throws `tamperDetected` too.
    public convenience init(at location: StoreLocation = .standard(), key: StoreKey? = nil, options: StorageOptions = StorageOptions()) throws {
        try self.init(
            at: location.databaseURL, key: key ?? .keyFile(location.keyFileURL), logger: options.logger,
            integrityCheck: options.integrityCheck, rollbackAnchor: options.rollbackAnchor, clock: SystemClock())
    }

    /// ``init(at:key:options:)`` with the database's URL and each option apart: what the command
    /// line and the tests open stores with.
    package convenience init(
        at databaseURL: URL, key: StoreKey, logger: Logger = Logger(label: "credstore"),
        integrityCheck: IntegrityCheck = .onOpen, rollbackAnchor: RollbackAnchor = .standard
    ) throws {
        try self.init(
            at: databaseURL, key: key, logger: logger, integrityCheck: integrityCheck, rollbackAnchor: rollbackAnchor,
            clock: SystemClock())
    }

    /// Opens the store as ``init(at:key:options:)`` does, reading
    /// the time from `clock` (row timestamps, the sync clock, tombstone expiry, bundle age, the
    /// change log's retention): for tests that control time.
    package convenience init(
        at databaseURL: URL, key: StoreKey, logger: Logger = Logger(label: "credstore"),
        integrityCheck: IntegrityCheck = .onOpen, rollbackAnchor: RollbackAnchor = .standard, clock: any StoreClock
    ) throws {
        let opened = try StoreOpener.open(
            databaseURL: databaseURL, key: key, logger: logger, integrityCheck: integrityCheck, anchor: rollbackAnchor,
            clock: clock)
        self.init(databaseURL: databaseURL, opened: opened, logger: logger, clock: clock)
    }

    /// What opening a store checks of the table seal. Whatever is chosen, every read checks the
    /// rows it returns against the seal's tree (a lookup its space, a listing every row), and
    /// each row's own authentication when it is opened.
    public enum IntegrityCheck: Sendable, Hashable {
        /// The seal's MAC and the rollback anchor: constant time, whatever the store's size. A
        /// store whose seal was edited, or which is older than its anchor, throws `tamperDetected`.
        case onOpen
        /// Nothing at open beyond the key: ``StoreMaintenance/verify()`` reports the seal and
        /// the anchor with every other problem. For tools that diagnose a damaged store.
        case deferredToVerify
    }

    init(databaseURL: URL, opened: StoreOpener.Opened, logger: Logger, clock: any StoreClock = SystemClock()) {
        self.databaseURL = databaseURL
        self.clock = clock
        self.repository = opened.repository
        let keyHolder = KeyHolder(keys: opened.keys, generation: opened.header.keyGeneration, kek: opened.kek, protection: opened.protection)
        self.keyHolder = keyHolder
        self.header = opened.header
        self.anchor = opened.anchor
        self.sealChecks = opened.hasSealTree ? SealChecks(storeID: opened.header.storeID, generation: opened.sealGeneration) : nil
        self.logger = logger
        let instanceID = Sodium.randomBytes(16)
        self.instanceID = instanceID
        let repository = opened.repository
        hub = ChangeHub(
            logger: logger,
            latestSequence: { try repository.read { try $0.changeLogPosition().sequence } },
            loggedChanges: { since in
                try repository.read { reader in
                    let changes = try Self.loggedChanges(after: since, in: reader, keys: keyHolder.keys, skipping: instanceID)
                    // Entries that do not open were sealed under a root key another process has
                    // rotated in since: follow it and read them again.
                    guard changes.unopened > 0, let (header, slots) = try reader.header(),
                          try keyHolder.follow(header: header, slots: slots)
                    else { return changes }
                    return try Self.loggedChanges(after: since, in: reader, keys: keyHolder.keys, skipping: instanceID)
                }
            })
        hub.attach(self)
    }

    // MARK: Storing

    /// Stores `credential` for `space`, keeping what it leaves unset of the credential it replaces.
    ///
    /// A user has one credential per space: setting a user already present replaces what the new
    /// credential names (the password, and each field it sets) and keeps the rest: a
    /// ``/CredentialStoreCore/Credential/persistence`` left unset keeps the credential's tier, and
    /// an expiry, refresh token, label or comment left `nil` (an attribute not given) keeps the
    /// old one. To clear a detail, or to change details without the password, use
    /// ``update(user:for:options:_:)``. Setting an identical credential, or one with persistence
    /// ``/CredentialStoreCore/Persistence/none``, changes and announces nothing. The first
    /// credential set in a space without a default becomes the default.
    ///
    /// - Parameters:
    ///   - credential: The user, password and whatever else the write names.
    ///   - space: The protection space to store it for.
    ///   - options: ``RemovalOptions/removeSynchronizable`` to move a synchronizable credential to
    ///     another tier, which removes it on every synced machine.
    /// - Throws: `synchronizableRemovalNeedsOption` (and nothing changes) when `credential` names
    ///   another tier for a synchronizable credential without that option; `invalidInput` when the
    ///   user name or password holds a CR, LF or NUL (or the space's realm does),
    ///   `invalidProtectionSpace`, or the store's I/O and integrity errors.
    public func set(_ credential: Credential, for space: ProtectionSpace, options: RemovalOptions = []) throws {
        try credential.validate(in: space)
        guard credential.persistence != .none else { return }
        try mutate { try $0.set(credential, in: space, makeDefault: false, options: options) }
    }

    /// Makes `credential` the default of `space`, storing it first as ``set(_:for:options:)`` does
    /// if it is absent or differs.
    public func setDefaultCredential(_ credential: Credential, for space: ProtectionSpace, options: RemovalOptions = []) throws {
        try credential.validate(in: space)
        guard credential.persistence != .none else { return }
        try mutate { try $0.set(credential, in: space, makeDefault: true, options: options) }
    }

    /// Changes the credential `user` has in `space` in place: `change` gets it as stored, and
    /// what it leaves is stored as it is, so a detail set to `nil` is cleared. The password need
    /// not be restated.
    ///
    /// ```swift
    /// try storage.update(user: "alice", for: space) { credential in
    ///     credential.label = "CI token"
    ///     credential.expires = nil
    /// }
    /// ```
    ///
    /// `change` runs inside the store's write transaction: keep it short, and do not use the
    /// store from it.
    ///
    /// - Parameters:
    ///   - user: The user whose credential to change.
    ///   - space: The protection space it is stored for, exactly.
    ///   - options: ``RemovalOptions/removeSynchronizable`` to move a synchronizable credential to
    ///     another tier, which removes it on every synced machine.
    ///   - change: Changes the credential as stored; what it leaves is written.
    /// - Returns: The credential as stored.
    /// - Throws: `notFound` (and nothing changes) when `user` has no credential in `space`;
    ///   `invalidInput` when `change` renames the user, sets persistence
    ///   ``/CredentialStoreCore/Persistence/none`` or breaks a field rule;
    ///   `synchronizableRemovalNeedsOption`, as ``set(_:for:options:)`` throws it; whatever
    ///   `change` throws.
    @discardableResult
    public func update(
        user: String, for space: ProtectionSpace, options: RemovalOptions = [], _ change: (inout Credential) throws -> Void
    ) throws -> Credential {
        try space.validate()
        return try mutate { mutation in
            guard var credential = try mutation.stored(user: user, in: space) else {
                throw CredentialStorageError(.notFound, "\(String(reflecting: user)) has no credential in this protection space")
            }
            try change(&credential)
            guard credential.user == user else {
                throw CredentialStorageError(.invalidInput, "an update cannot rename the user; remove the credential and set one for the new user")
            }
            guard credential.persistence != .none else {
                throw CredentialStorageError(.invalidInput, "an update cannot keep a credential nowhere; remove it instead")
            }
            try credential.validate(in: space)
            try mutation.set(credential, in: space, makeDefault: false, fields: .replacingDetails, options: options)
            return credential
        }
    }

    /// Makes the credential that `user` already has in `space` the default, whatever its password
    /// and tier, without restating the password.
    ///
    /// - Throws: `notFound` (and nothing changes) when `user` has no credential in `space` itself
    ///   (the space is named exactly: a credential stored for another method or realm is not
    ///   this space's), `invalidProtectionSpace`, or the store's I/O and integrity errors.
    public func setDefault(user: String, for space: ProtectionSpace) throws {
        try space.validate()
        let found = try mutate { try $0.makeDefault(user: user, in: space) }
        guard found else {
            throw CredentialStorageError(.notFound, "\(String(reflecting: user)) has no credential in this protection space")
        }
    }

    /// Removes the credential of `user` in `space`, whatever its password and tier.
    ///
    /// Removing the default clears it; no other credential is promoted.
    ///
    /// - Returns: whether anything was removed.
    /// - Throws: `synchronizableRemovalNeedsOption` (and nothing changes) when the credential is
    ///   synchronizable and `options` lacks ``RemovalOptions/removeSynchronizable``.
    @discardableResult
    public func remove(user: String, for space: ProtectionSpace, options: RemovalOptions = []) throws -> Bool {
        try space.validate()
        return try mutate { try $0.remove(user: user, in: space, options: options) }
    }

    // MARK: Reading

    /// The credentials of `space`, keyed by user.
    public func credentials(for space: ProtectionSpace) throws -> [String: Credential] {
        try space.validate()
        return try readFollowingRekey({ keys in
            // The session snapshot is taken inside the serialized read: a write swaps the session
            // tier before its turn ends, so a user moving between tiers is always seen in one.
            let spaceIndex = keys.spaceIndex(space)
            let (sealed, sessionSpace) = try repository.read { (try checkedSpace(spaceIndex, reader: $0, keys: keys), currentSession()[space]) }
            // A lookup by user answers nothing from a space whose default choice betrays a deleted row.
            guard !sealed.defaultIsDangling else { throw Self.danglingDefault }
            var result: [String: Credential] = [:]
            for row in sealed.credentials {
                let credential = try keys.decryptCredential(row)
                result[credential.user] = credential
            }
            // This instance's session credentials win over a disk row another process wrote for the same user.
            result.merge(sessionSpace.credentials) { _, session in session }
            return result
        }, isMiss: \.isEmpty)
    }

    /// Every credential of the store and of this instance's session, by space and user, passwords
    /// included: `URLCredentialStorage.allCredentials` in a call.
    ///
    /// To list what a store holds, use ``entries(matching:)``: it opens no password, and says which
    /// credential is each space's default and when each changed.
    public func allCredentials() throws -> [ProtectionSpace: [String: Credential]] {
        try readFollowingRekey({ keys in
            let (rows, sessionTier) = try repository.snapshotRead { reader in
                try checkEveryRow(reader, keys: keys)
                return (try reader.allCredentials(), currentSession())
            }
            var result: [ProtectionSpace: [String: Credential]] = [:]
            for row in rows {
                let (space, credential) = try keys.decryptAll(row)
                result[space, default: [:]][credential.user] = credential
            }
            for (space, entry) in sessionTier.spaces where !entry.credentials.isEmpty {
                result[space, default: [:]].merge(entry.credentials) { _, session in session }
            }
            return result
        }, isMiss: { _ in false })
    }

    /// The default credential of `space`: the one chosen as default, else the space's only
    /// credential, else nil.
    ///
    /// For the password methods ``/CredentialStoreCore/AuthenticationMethod/default`` means "any":
    /// when `space` itself has no default, the same realm under each method of
    /// ``/CredentialStoreCore/AuthenticationMethod/answeringMethods`` is asked in turn. A lookup for
    /// Basic finds a credential stored without a method, and one stored without a method finds a
    /// credential stored for Basic; a credential stored for Digest answers only Digest. The realm,
    /// host, port, scheme and proxy are never relaxed here; ``defaultCredential(answering:)``
    /// also falls back to the origin's credential without a realm.
    public func defaultCredential(for space: ProtectionSpace) throws -> Credential? {
        try defaultCredentialAndSpace(for: space)?.credential
    }

    /// ``defaultCredential(for:)`` with the space it is the default of, which
    /// may be a compatible one: what a caller that later removes, replaces or describes the
    /// credential must name, never `space` itself.
    ///
    /// An expired credential (``/CredentialStoreCore/Credential/isExpired(at:)`` by the store's clock) is no space's
    /// default: the next compatible space is asked. With `includingExpired`, it is (git's
    /// protocol answers an expired credential's refresh token).
    package func defaultCredentialAndSpace(
        for space: ProtectionSpace, includingExpired: Bool = false
    ) throws -> (space: ProtectionSpace, credential: Credential)? {
        try space.validate()
        let now = includingExpired ? nil : clock.now()
        func usable(_ credential: Credential?) -> Credential? {
            guard let credential, let now else { return credential }
            return Credential.hasPassed(credential.expiresEpochSeconds, at: now / 1000) ? nil : credential
        }
        return try readFollowingRekey({ keys in
            // The exact space answers almost every lookup: the compatible spaces (each a new
            // canonical encoding) are built only when it does not.
            if let credential = try usable(exactDefaultCredential(for: space, keys: keys)) { return (space, credential) }
            for candidate in space.compatibleSpaces.dropFirst() {
                if let credential = try usable(exactDefaultCredential(for: candidate, keys: keys)) { return (candidate, credential) }
            }
            return nil
        }, isMiss: { found in
            // Under keys another instance has rotated away, every stored row reads as missing but
            // the session tier does not: a session credential of a later space may stand in for
            // the stored one of an earlier space, so it counts as a miss until the keys are checked.
            guard let found else { return true }
            return found.credential.persistence == .forSession && found.space != space
        })
    }

    /// The default rule over `space` alone, without falling back to another method.
    func exactDefaultCredential(for space: ProtectionSpace) throws -> Credential? {
        try readFollowingRekey({ try exactDefaultCredential(for: space, keys: $0) }, isMiss: { $0 == nil })
    }

    private func exactDefaultCredential(for space: ProtectionSpace, keys: StoreKeyring) throws -> Credential? {
        let spaceIndex = keys.spaceIndex(space)
        let (sealed, sessionSpace) = try repository.read { reader in
            // Most processes keep no session credentials: skip hashing the space then.
            let sessionSpace = session.withLock { $0.spaces.isEmpty ? SessionTier.Space() : $0[space] }
            // With session credentials beside a single stored one, the stored default choice decides.
            return (try checkedSpace(spaceIndex, reader: reader, keys: keys), sessionSpace)
        }
        return try resolveDefault(session: sessionSpace, sealed: sealed, keys: keys)
    }

    /// A write pipeline for this instance: under the write lock it refuses a seal older than the
    /// rollback anchor's generation or than one this instance saw (an older copy of the store put
    /// back while it was open, which a write would otherwise make current).
    func makePipeline(keys: StoreKeyring) -> WritePipeline {
        let pipeline = WritePipeline(keys: keys, storeID: header.storeID, clock: clock)
        pipeline.generationFloor = { [anchor, sealChecks] in
            let floor = max(anchor?.recordedGeneration() ?? 0, sealChecks?.highestGeneration ?? 0)
            return floor > 0 ? floor : nil
        }
        return pipeline
    }

    /// Notes a committed seal generation: the rollback anchor, and this instance's floor.
    func committed(generation: Int64) {
        anchor?.advance(to: generation)
        sealChecks?.advance(to: generation)
    }

    /// Checks `claims`, made from rows `reader` returned, against the seal and the tree as the
    /// same snapshot (a transaction) holds them; nothing for a store without a seal tree.
    func checkLeaves(_ claims: @autoclosure () -> [SealChecks.Claim], reader: any CredentialRepositoryReading, keys: StoreKeyring) throws {
        guard let sealChecks else { return }
        let claims = claims()
        let seal = try reader.tableSeal()
        let buckets = try reader.sealNodes(SealChecks.bucketIDs(for: claims.map(\.leaf)))
        do {
            let missing = try sealChecks.check(claims, seal: seal, buckets: buckets, keys: keys)
            guard !missing.isEmpty else { return }
            // In this transaction's snapshot, the seal is the one read above.
            try sealChecks.learn(try reader.sealWithNodes(missing).nodes, requested: missing, seal: seal, keys: keys)
            guard try sealChecks.check(claims, seal: seal, buckets: buckets, keys: keys).isEmpty else {
                throw SealTree.tampered("a node of the seal tree does not match its parent")
            }
        } catch let older as SealChecks.OlderSeal {
            // A transaction begun after every read this instance made: an older seal is a rollback.
            throw older.tampered
        }
    }

    /// A space's rows, checked against the seal tree: the rows, the seal and the space's bucket in
    /// one statement, so in one snapshot; the interior nodes above the bucket come from what this
    /// instance has checked under the same seal, or are read (with the seal) and checked once.
    func checkedSpace(_ spaceIndex: BlindIndex, reader: any CredentialRepositoryReading, keys: StoreKeyring) throws -> SealedSpace {
        guard let sealChecks else { return try reader.space(spaceIndex) }
        let leaf = SealTree.Leaf(kind: .space, group: spaceIndex.bytes)
        let bucketID = SealTree.nodeID(level: SealTree.bucketLevel, position: leaf.bucket)
        return try sealChecks.check(keys: keys, anchor: anchor, read: {
            let (space, seal, nodes) = try reader.spaceWithSeal(spaceIndex, nodeID: bucketID)
            return (space, [SealChecks.spaceClaim(spaceIndex, space, keys: keys)], seal, nodes)
        }, readInterior: { try reader.sealWithNodes($0) })
    }

    /// The store's current working keys.
    var keys: StoreKeyring { keyHolder.keys }

    /// Runs a read with the current keys. If it finds nothing, or fails authentication, and another
    /// process has rotated the root key meanwhile, follows the rotation and reads once more:
    /// a rekey elsewhere never turns into a false miss or a false tamper report here.
    func readFollowingRekey<T>(_ body: (StoreKeyring) throws -> T, isMiss: (T) -> Bool) throws -> T {
        do {
            let result = try body(keys)
            guard isMiss(result), try followRekey() else { return result }
        } catch let error as CredentialStorageError where error.code == .tamperDetected {
            guard try followRekey() else { throw error }
        }
        return try body(keys)
    }

    /// Reads the header and adopts a newer key generation; returns whether it did.
    func followRekey() throws -> Bool {
        guard let (header, slots) = try repository.read({ try $0.header() }) else { return false }
        return try keyHolder.follow(header: header, slots: slots)
    }

    /// The default rule over both tiers of one space.
    func resolveDefault(session sessionSpace: SessionTier.Space, sealed: SealedSpace, keys: StoreKeyring) throws -> Credential? {
        // Before the session tier gets its say: a dangling choice is tampering whatever answers.
        guard !sealed.defaultIsDangling else { throw Self.danglingDefault }
        if let user = sessionSpace.defaultUser, let credential = sessionSpace.credentials[user] {
            return credential
        }
        // One stored credential and nothing in the session: it is the answer whether or not a
        // choice names it (a choice naming anything else is dangling, refused above), so the
        // choice need not be opened.
        if sessionSpace.credentials.isEmpty, sealed.credentials.count == 1 {
            return try keys.decryptCredential(sealed.credentials[0])
        }
        if let choice = sealed.defaultChoice,
           let row = sealed.credentials.first(where: { $0.userIndex == choice.userIndex }) {
            // The pointer is trusted only once its sealed user opens under its own indexes: a
            // user index copied in from another row must not redirect the default.
            let chosen = try keys.decryptDefault(choice)
            let credential = try keys.decryptCredential(row)
            guard credential.user == chosen else { throw StoreKeyring.tampered }
            return sessionSpace.credentials[credential.user] ?? credential
        }
        switch (sessionSpace.credentials.count, sealed.credentials.count) {
        case (1, 0): return sessionSpace.credentials.first!.value
        case (0, 1): return try keys.decryptCredential(sealed.credentials[0])
        default: return nil
        }
    }

    /// A snapshot of this instance's session tier.
    func currentSession() -> SessionTier {
        session.withLock { $0 }
    }

    // MARK: Observing

    /// A stream of every effective change to this store, in commit order: this instance's own,
    /// other processes' (within a second, as ``CredentialChange/Origin/otherProcess``) and sync
    /// imports'. Each call returns a new stream; cancel the task iterating it to unsubscribe.
    ///
    /// Each change is also posted on `NotificationCenter.default` as
    /// `Notification.Name.credentialStorageChanged`; other processes' changes are watched for
    /// while at least one stream is open.
    public func changes() -> AsyncStream<CredentialChange> {
        hub.subscribe()
    }

    // MARK: Writing

    /// Other writers' entries of the change log after `since`, opened, with the range read.
    /// Entries of another instance in this process come as ``CredentialChange/Origin/thisProcess``.
    static func loggedChanges(
        after since: Int64, limit: Int = -1, in reader: any CredentialRepositoryReading, keys: StoreKeyring, skipping writer: [UInt8]
    ) throws -> ChangeHub.LoggedChanges {
        let entries = try reader.changes(after: since, limit: limit)
        let processID = getpid()
        let foreign = entries.filter { $0.writer != writer }
        var changes: [(sequence: Int64, change: CredentialChange)] = []
        var unopened = 0
        for entry in foreign {
            guard let opened = keys.decryptChanges(entry, origin: entry.processID == processID ? .thisProcess : .otherProcess) else {
                unopened += 1
                continue
            }
            changes += opened.map { (sequence: entry.sequence, change: $0) }
        }
        return ChangeHub.LoggedChanges(
            changes: changes, first: entries.first?.sequence, last: entries.last?.sequence, unopened: unopened)
    }

    /// Runs one write transaction with a ``Mutation``, through the ``WritePipeline``; once it
    /// commits, swaps in the new session tier and announces the changes, in commit order. A dry
    /// run takes the same steps in a transaction that is rolled back, and returns its result.
    /// With `smallPageCache`, the transaction runs through a small page cache and no memory map
    /// (``SQLiteRepository/withSmallPageCache(_:)``): for a very large import.
    func mutate<T>(
        origin: CredentialChange.Origin = .thisProcess, dryRun: Bool = false, smallPageCache: Bool = false,
        _ body: (inout Mutation) throws -> T
    ) throws -> T {
        guard smallPageCache else { return try mutateThroughPipeline(origin: origin, dryRun: dryRun, body) }
        return try repository.withSmallPageCache { try mutateThroughPipeline(origin: origin, dryRun: dryRun, body) }
    }

    private func mutateThroughPipeline<T>(
        origin: CredentialChange.Origin, dryRun: Bool, _ body: (inout Mutation) throws -> T
    ) throws -> T {
        let pipeline = makePipeline(keys: keys)
        // An import's merge writes the remote registers, with their stamps, itself.
        pipeline.syncRegisters = origin == .syncImport ? nil : SyncRegisterKeeper()
        func write(_ transaction: any CredentialRepositoryWriting) throws -> MutationOutcome<T> {
            // Holding the write lock, make sure the keys are the store's current ones: sealing
            // with keys another process has rotated away would write unreadable rows.
            if let generation = try transaction.keyGeneration(), generation != keyHolder.generation,
               let (header, slots) = try transaction.header() {
                try keyHolder.follow(header: header, slots: slots)
            }
            let currentKeys = self.keys
            pipeline.keys = currentKeys
            var mutation = Mutation(
                transaction: transaction, session: session.withLock { $0 }, keys: currentKeys,
                writer: instanceID, processID: getpid(), clock: clock)
            mutation.origin = origin
            mutation.announcementCap = announcementCap
            let (writer, processID) = (instanceID, getpid())
            mutation.changeLogSink = { try pipeline.appendChangeLog($0, writer: writer, processID: processID, into: transaction) }
            mutation.syncRegisterSink = { try pipeline.syncRegisters?.keepRegistersIfMany($0) }
            let result = try body(&mutation)
            try pipeline.syncRegisters?.keepRegisters(mutation.ledger)
            let generation = try pipeline.foldSeal(into: transaction)
            try mutation.flushChangeLog()
            // While others' processes are watched, their commits that precede this one are read
            // now, under the lock, so they are announced before this transaction's changes.
            var logged = ChangeHub.LoggedChanges(changes: [], first: nil, last: nil, unopened: 0)
            if !dryRun, let since = hub.watchedSequence {
                // Only the entries before this write's own, which follow them with nothing after
                // (the lock is held): a large write's own entries are not read back into memory.
                let own = pipeline.loggedSequences
                logged = try Self.loggedChanges(
                    after: since, limit: own.map { Int($0.lowerBound - 1 - since) } ?? -1, in: transaction, keys: currentKeys,
                    skipping: instanceID)
                if let own { logged.last = own.upperBound }
            }
            var replay: AnnouncementReplay?
            if mutation.announcementsOverflowed {
                let (repository, keys) = (repository, currentKeys)
                replay = AnnouncementReplay(
                    plan: mutation.replayPlan, origin: origin, sequences: pipeline.loggedSequences,
                    // Held weakly, like the rest of the delivery: once the store is let go, the rest goes unannounced.
                    entry: { [weak repository] after in
                        guard let entry = try repository?.read({ try $0.changes(after: after, limit: 1).first }) else { return nil }
                        return (entry.sequence, entry.writer == writer ? keys.decryptChanges(entry, origin: origin) : nil)
                    })
            }
            return MutationOutcome(
                result: result, session: mutation.session, local: mutation.announcements, replay: replay, logged: logged,
                generation: generation)
        }
        if dryRun {
            return try repository.writeRolledBack(observer: pipeline, write).result
        }
        return try repository.write(observer: pipeline, write, afterCommit: { outcome in
            if let generation = outcome.generation { committed(generation: generation) }
            session.withLock { $0 = outcome.session }
            hub.deliver(logged: outcome.logged.changes, local: outcome.local, replay: outcome.replay, through: outcome.logged.last)
        }).result
    }
}

/// What a committed write hands on: its result, the session tier to swap in, and the changes to
/// announce (other writers' earlier ones first).
private struct MutationOutcome<T> {
    var result: T
    var session: SessionTier
    var local: [CredentialChange]
    /// Instead of `local`, for a write that announced more than ``Mutation/announcementCap`` changes.
    var replay: AnnouncementReplay?
    var logged: ChangeHub.LoggedChanges
    /// The table seal's new generation, when the write changed sealed rows.
    var generation: Int64?
}
