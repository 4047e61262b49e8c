import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import Foundation

/// The tier and default rules of one write, applied to a store transaction and to a copy of the
/// session tier that replaces the live one only if the transaction commits.
struct Mutation {
    let transaction: any CredentialRepositoryWriting
    var session: SessionTier
    let keys: StoreKeyring
    let writer: [UInt8]
    let processID: Int32
    let clock: any StoreClock
    /// Who this instance's subscribers are told made the changes.
    var origin: CredentialChange.Origin = .thisProcess
    /// For an import: which replaced local values lost a concurrent edit (nil: none do).
    var concurrency: ConcurrentEditRule?
    /// The credentials whose local change lost a concurrent edit in this write.
    var conflicts: [SyncConflict] = []

    /// What this instance's subscribers hear, while the write announces at most
    /// ``announcementCap`` changes; emptied when it announces more (``announcementsOverflowed``),
    /// and the changes are then read back from the change log after the commit
    /// (``AnnouncementReplay``).
    private(set) var announcements: [CredentialChange] = []
    /// The most announcements kept in memory (``Mutation/announcementCap`` unless a test lowers it).
    var announcementCap = Mutation.announcementCap
    /// Where the change log's batches go as they fill, during the write (the ``WritePipeline``).
    var changeLogSink: ([CredentialChange]) throws -> Void = { _ in }
    /// Records the sync registers of the rows written so far when they are many (the
    /// ``WritePipeline``'s ``SyncRegisterKeeper``); see ``keepSyncRegistersIfMany()``.
    var syncRegisterSink: (SyncLedger) throws -> Void = { _ in }

    /// Lets a long write (a batch) record the registers of the rows written so far, between two
    /// of its steps, so that it does not hold every row it touched until its end.
    func keepSyncRegistersIfMany() throws {
        try syncRegisterSink(ledger)
    }
    /// What other processes hear (only what changed on disk), not yet handed to the change log.
    private var logged: [CredentialChange] = []
    /// How the announcements differ from the logged changes, for reading them back.
    private(set) var replayPlan = AnnouncementReplay.Plan()
    /// The newest logged change, while no announcement has echoed it.
    private var unechoedLog: CredentialChange?

    /// The most changes a write keeps in memory for this instance's subscribers: 4,096 are a few
    /// hundred KiB, and only an import changes more (docs/reliability.md).
    static let announcementCap = 4096

    init(
        transaction: any CredentialRepositoryWriting, session: SessionTier, keys: StoreKeyring, writer: [UInt8], processID: Int32,
        clock: any StoreClock
    ) {
        self.transaction = transaction
        self.clock = clock
        self.session = session
        self.keys = keys
        self.writer = writer
        self.processID = processID
    }

    var ledger: SyncLedger { SyncLedger(transaction: transaction, keys: keys, clock: clock) }

    // MARK: Rules

    /// How a write treats what its credential leaves unset.
    enum Fields {
        /// The tier and each detail the credential leaves unset are the replaced credential's
        /// (``Credential/keepingUnnamed(of:)``): what `set` does.
        case keepingUnnamed
        /// The details are written as the credential has them (a `nil` clears one); only a tier it
        /// leaves unset is the replaced credential's: what an update of the whole credential does.
        case replacingDetails
    }

    /// Writes `named` for its user in `space`.
    ///
    /// Moving a synchronizable credential to another tier removes it from every synced machine,
    /// so it needs `options` to hold ``RemovalOptions/removeSynchronizable``, as a removal does.
    ///
    /// With `makeDefault`, the user is made the default; `choosingDefault` says whether that is
    /// the user's own choice, which the fleet hears even when nothing changed here (git's approval
    /// of what it used is not).
    mutating func set(
        _ named: Credential, in space: ProtectionSpace, makeDefault: Bool, choosingDefault: Bool = true, fields: Fields = .keepingUnnamed,
        options: RemovalOptions = []
    ) throws {
        let spaceIndex = keys.spaceIndex(space)
        let currentDefault = try explicitDefault(space: space, spaceIndex: spaceIndex)
        let user = named.user
        let sessionCredential = session[space].credentials[user]
        let row = try transaction.credential(space: spaceIndex, user: keys.userIndex(spaceIndex: spaceIndex, user: user))
        let stored = try row.map(keys.decryptCredential)
        let existing = sessionCredential ?? stored
        var credential = named
        if let existing {
            switch fields {
            // Expiries are whole seconds; the clock reads milliseconds.
            case .keepingUnnamed: credential = named.keepingUnnamed(of: existing, now: clock.now() / 1000)
            case .replacingDetails where !named.choosesPersistence: credential.persistence = existing.persistence
            case .replacingDetails: break
            }
        }
        if existing?.persistence == .synchronizable, credential.persistence != .synchronizable, !options.contains(.removeSynchronizable) {
            throw Self.leavingSync(user: user, to: credential.persistence)
        }
        // Setting an identical credential is a no-op: it elects no default either.
        if existing == credential, !makeDefault { return }

        if existing != credential {
            if credential.persistence == .forSession {
                if let stored {
                    try transaction.deleteCredential(space: spaceIndex, user: row!.userIndex)
                    try log(.removed, space, user, stored.persistence)
                }
                session.set(credential, in: space)
            } else {
                if sessionCredential != nil { session.remove(user: user, in: space) }
                let now = clock.now()
                try transaction.upsert(keys.encrypt(credential, in: space, spaceIndex: spaceIndex, created: row?.created ?? now, modified: now))
                try log(stored == nil ? .added : .updated, space, user, credential.persistence)
            }
            announce(existing == nil ? .added : .updated, space, user, credential.persistence)
        }

        // The first credential of a space without a default becomes the default.
        let target = makeDefault ? user : (currentDefault ?? user)
        try placeDefault(target, space: space, spaceIndex: spaceIndex)
        if makeDefault, choosingDefault { try recordChosenDefault(user, spaceIndex: spaceIndex) }
        if target != currentDefault {
            let persistence = target == user ? credential.persistence : (existing?.persistence ?? credential.persistence)
            announce(.defaultChanged, space, target, persistence)
        }
    }

    /// What moving a synchronizable credential to another tier without consent throws.
    static func leavingSync(user: String, to persistence: Persistence) -> CredentialStorageError {
        CredentialStorageError(.synchronizableRemovalNeedsOption,
            "the credential of \(String(reflecting: user)) is synchronizable; keeping it \(persistence == .forSession ? "for this session" : "on this machine only") removes it on every synced machine, so confirm it with RemovalOptions.removeSynchronizable, or leave its persistence unset to keep it synchronizable")
    }

    /// Makes the credential `user` already has in `space` the default, whatever its password and
    /// tier; returns false, changing nothing, when the user has none there.
    mutating func makeDefault(user: String, in space: ProtectionSpace) throws -> Bool {
        let spaceIndex = keys.spaceIndex(space)
        let currentDefault = try explicitDefault(space: space, spaceIndex: spaceIndex)
        let persistence: Persistence
        if let sessionCredential = session[space].credentials[user] {
            persistence = sessionCredential.persistence
        } else if let row = try transaction.credential(space: spaceIndex, user: keys.userIndex(spaceIndex: spaceIndex, user: user)) {
            persistence = row.persistence
        } else {
            return false
        }
        try placeDefault(user, space: space, spaceIndex: spaceIndex)
        try recordChosenDefault(user, spaceIndex: spaceIndex)
        if user != currentDefault { announce(.defaultChanged, space, user, persistence) }
        return true
    }

    /// An explicit choice of a synchronizable default is a write to the fleet even when this
    /// store already had that default: another machine may have chosen someone else since, and
    /// the user's latest choice must win there too. (A changed pointer gets its register from the
    /// ``SyncRegisterKeeper`` as well; a second, later tick of the clock changes nothing.)
    private func recordChosenDefault(_ user: String, spaceIndex: BlindIndex) throws {
        guard origin != .syncImport,
              let row = try transaction.credential(space: spaceIndex, user: keys.userIndex(spaceIndex: spaceIndex, user: user)),
              row.persistence == .synchronizable
        else { return }
        let ledger = ledger
        // The space as stored, as every register names it.
        try ledger.record(SyncDefaultState(space: try keys.decryptSpace(row), user: user, stamp: try ledger.tick()), spaceIndex: spaceIndex)
    }

    /// The credential `user` has on disk in `space`, if any (the session tier aside).
    func storedCredential(user: String, in space: ProtectionSpace) throws -> Credential? {
        let spaceIndex = keys.spaceIndex(space)
        return try transaction.credential(space: spaceIndex, user: keys.userIndex(spaceIndex: spaceIndex, user: user)).map(keys.decryptCredential)
    }

    mutating func remove(user: String, in space: ProtectionSpace, options: RemovalOptions) throws -> Bool {
        let spaceIndex = keys.spaceIndex(space)
        let currentDefault = try explicitDefault(space: space, spaceIndex: spaceIndex)
        let sessionCredential = session[space].credentials[user]
        let userIndex = keys.userIndex(spaceIndex: spaceIndex, user: user)
        let row = try transaction.credential(space: spaceIndex, user: userIndex)
        guard sessionCredential != nil || row != nil else { return false }

        if let row {
            if row.persistence == .synchronizable, !options.contains(.removeSynchronizable) {
                throw CredentialStorageError(.synchronizableRemovalNeedsOption,
                    "the credential of \(String(reflecting: user)) is synchronizable; removing it removes it on every synced machine, so confirm the removal with RemovalOptions.removeSynchronizable")
            }
            try transaction.deleteCredential(space: spaceIndex, user: userIndex)
            try log(.removed, space, user, row.persistence)
            announce(.removed, space, user, row.persistence)
        }
        if sessionCredential != nil {
            session.remove(user: user, in: space)
            announce(.removed, space, user, .forSession)
        }
        if currentDefault == user {
            // No guess among those left: the default is simply gone.
            try placeDefault(nil, space: space, spaceIndex: spaceIndex)
        }
        return true
    }

    // MARK: Default pointer

    /// The user the space's default pointer names, if that user still has a credential.
    private func explicitDefault(space: ProtectionSpace, spaceIndex: BlindIndex) throws -> String? {
        let sessionSpace = session[space]
        if let user = sessionSpace.defaultUser, sessionSpace.credentials[user] != nil {
            return user
        }
        guard let choice = try transaction.defaultChoice(space: spaceIndex) else { return nil }
        // Inside the write transaction no other writer can be half-way: a choice that names no
        // credential was left by someone editing the file, and a write must not paper over it.
        guard try transaction.credential(space: spaceIndex, user: choice.userIndex) != nil else {
            throw CredentialStorage.danglingDefault
        }
        return try keys.decryptDefault(choice)
    }

    /// Puts the default pointer in the tier of the credential it names (or removes it), writing
    /// only what differs.
    private mutating func placeDefault(_ user: String?, space: ProtectionSpace, spaceIndex: BlindIndex) throws {
        let diskChoice = try transaction.defaultChoice(space: spaceIndex)
        let inSession = user.map { session[space].credentials[$0] != nil } ?? false
        if let user, !inSession {
            let userIndex = keys.userIndex(spaceIndex: spaceIndex, user: user)
            if diskChoice?.userIndex != userIndex {
                try transaction.setDefaultChoice(keys.encryptDefault(user: user, spaceIndex: spaceIndex))
                if let row = try transaction.credential(space: spaceIndex, user: userIndex) {
                    try log(.defaultChanged, space, user, row.persistence)
                }
            }
            if session[space].defaultUser != nil { session.setDefault(nil, in: space) }
        } else {
            if diskChoice != nil {
                try transaction.deleteDefaultChoice(space: spaceIndex)
            }
            if session[space].defaultUser != user { session.setDefault(user, in: space) }
        }
    }

    // MARK: Announcements

    /// Whether this write announced more than ``announcementCap`` changes, so that
    /// ``announcements`` is empty and the changes are read back from the change log.
    var announcementsOverflowed: Bool { replayPlan.announcementCount > announcementCap }

    /// Makes room for up to `count` more announcements at once (within the cap): grown by
    /// doubling, a large import's array would be copied over and over, each time into freshly
    /// faulted-in pages.
    mutating func reserveChanges(_ count: Int) {
        announcements.reserveCapacity(min(announcements.count + count, announcementCap))
    }

    mutating func announce(_ kind: CredentialChange.Kind, _ space: ProtectionSpace, _ user: String, _ persistence: Persistence) {
        let change = CredentialChange(kind: kind, space: space, user: user, persistence: persistence, origin: origin)
        // Most announcements repeat the change just logged (in this instance's origin); only the
        // others are kept apart, with their place, so the log can stand in for the rest.
        if let last = unechoedLog, last.kind == kind, last.persistence == persistence, last.user == user, last.space == space {
            unechoedLog = nil
        } else {
            replayPlan.unlogged.append((position: replayPlan.announcementCount, change: change))
        }
        replayPlan.announcementCount += 1
        if replayPlan.announcementCount <= announcementCap {
            announcements.append(change)
        } else if !announcements.isEmpty {
            announcements = []
        }
    }

    mutating func log(_ kind: CredentialChange.Kind, _ space: ProtectionSpace, _ user: String, _ persistence: Persistence) throws {
        if unechoedLog != nil { replayPlan.unannounced.append(replayPlan.loggedCount - 1) }
        let change = CredentialChange(kind: kind, space: space, user: user, persistence: persistence, origin: .otherProcess)
        unechoedLog = change
        replayPlan.loggedCount += 1
        logged.append(change)
        if logged.count >= WritePipeline.changeLogBatchSize {
            try changeLogSink(logged)
            logged.removeAll(keepingCapacity: true)
        }
    }

    /// Hands the last logged changes to the change log, once the write's own work is done.
    mutating func flushChangeLog() throws {
        if unechoedLog != nil {
            replayPlan.unannounced.append(replayPlan.loggedCount - 1)
            unechoedLog = nil
        }
        if !logged.isEmpty { try changeLogSink(logged) }
        logged = []
    }
}
