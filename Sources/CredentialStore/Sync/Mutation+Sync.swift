import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

/// Applying what a bundle carries: last writer wins per item and per default choice.
extension Mutation {
    enum ItemOutcome {
        case added, updated, removed, unchanged
    }

    /// Merges one remote item. A local register at least as new wins; otherwise the remote state
    /// replaces the local one. Imports never elect a default by themselves: defaults arrive as
    /// their own registers, so every machine ends with the same choice.
    ///
    /// A missing register is "older than anything" only when there is no synchronizable
    /// credential either: a synchronizable credential always has a live register, and a live
    /// register always its synchronizable credential, and a store where one lacks the other was
    /// tampered with (`tamperDetected`): merging would let any older value win.
    ///
    /// `spaceIndex` and `userIndex` are the item's blind indexes, which an import computes up front.
    mutating func merge(_ remote: BundleItem, spaceIndex: BlindIndex, userIndex: BlindIndex) throws -> ItemOutcome {
        try Credential.validate(user: remote.user, password: remote.password)  // the rules `set` applies (the space's: in its decoding; the details' below)
        let ledger = ledger
        let space = remote.space
        let local = try ledger.item(spaceIndex: spaceIndex, userIndex: userIndex)
        let row = try transaction.credential(space: spaceIndex, user: userIndex)
        let live = local.map { !$0.deleted } ?? false
        guard live == (row?.persistence == .synchronizable) else {
            throw TableSealing.unpaired(live ? "a live register without its credential" : "a synchronizable credential without a live register")
        }
        // A stale store's tombstone is remembered from when it was recorded, not from its reading:
        // never later than now here, whatever the recording store's clock said.
        let rememberedSince = remote.password != nil ? nil : remote.rememberedSince.flatMap { since in
            since > remote.stamp.wall ? min(since, clock.now()) : nil
        }
        // At one reading a deletion outranks the live item: only a stale store's withdrawal or
        // refusal (docs/sync-format.md, "Stale devices") records one, and every store must end
        // deleting the item, whichever it merged first.
        if let local, local.stamp > remote.stamp || (local.stamp == remote.stamp && (local.deleted || remote.password != nil)) {
            return .unchanged
        }
        // A deletion the whole fleet may forget by now, of an item this store has no record of
        // (it forgot it, or never held it): nothing to delete here, and recorded again it would
        // be passed on as new, so that no store ever forgot it.
        if local == nil, remote.password == nil, (rememberedSince ?? remote.stamp.wall) < clock.now() - SyncLedger.tombstoneLifetimeMillis {
            return .unchanged
        }
        // The remote state wins; a local value it replaces may be the loser of a concurrent edit.
        let lost = local.flatMap { local in
            !local.deleted && concurrency?.isConcurrent(local: local.stamp, remote: remote.stamp) == true ? local.stamp : nil
        }
        // A removal made here that a concurrent edit undoes: nothing to keep, but it is said. (A
        // move out of sync is a removal too; the value it kept is what loses, and is kept below.)
        let removalLost = local.map { local in
            local.deleted && row == nil && remote.password != nil && concurrency?.isConcurrent(local: local.stamp, remote: remote.stamp) == true
        } ?? false
        // A deletion that arrives is this store's to pass on: until this store's own bundle carries
        // it, the devices that merge only that bundle have not heard of it (SyncItemState.unpublished).
        try ledger.record(
            SyncItemState(space: remote.space, user: remote.user, stamp: remote.stamp, deleted: remote.password == nil,
                          rememberedSince: rememberedSince, unpublished: remote.password == nil),
            spaceIndex: spaceIndex, userIndex: userIndex)

        guard let password = remote.password else {
            // A deletion removes only what sync put here: never a credential kept outside sync.
            guard let row, row.persistence == .synchronizable else { return .unchanged }
            // A removal wins over a concurrent edit, and keeps nothing of the credential: reported only.
            if lost != nil { noteConflict(space, remote.user, kept: false) }
            try transaction.deleteCredential(space: spaceIndex, user: userIndex)
            if try transaction.defaultChoice(space: spaceIndex)?.userIndex == userIndex {
                try transaction.deleteDefaultChoice(space: spaceIndex)
            }
            try log(.removed, space, remote.user, .synchronizable)
            announce(.removed, space, remote.user, .synchronizable)
            return .removed
        }

        var credential = Credential(user: remote.user, password: password, persistence: .synchronizable)
        if !remote.details.isEmpty {
            var reader = ByteReader(remote.details)
            defer { reader.wipe() }
            do {
                try StoreKeyring.readDetails(into: &credential, from: &reader)
            } catch {
                throw BundleFormat.invalid("an item's details do not decode")
            }
            try credential.validateDetails()
        }
        let stored = try row.map(keys.decryptCredential)
        let sessionCredential = session[space].credentials[remote.user]
        if stored == credential, sessionCredential == nil { return .unchanged }
        if sessionCredential != nil { session.remove(user: remote.user, in: space) }
        let now = clock.now()
        // The value that loses: a concurrent edit's, or one kept outside sync here (a permanent
        // credential, made here or moved out of sync) that the fleet's newer value replaces.
        var loser: (credential: Credential, stamp: HybridTimestamp)?
        if let lost, let stored, stored != credential {
            loser = (stored, lost)
        } else if let row, var stored, row.persistence != .synchronizable {
            let kept = stored
            stored.persistence = .synchronizable
            // The same value arriving in sync loses nothing; the tier alone is the fleet's.
            if stored != credential {
                loser = (kept, local?.stamp ?? HybridTimestamp(wall: row.modified, counter: 0, device: concurrency?.device ?? writer))
            }
        }
        if let loser {
            try keep(KeptVersionState(space: space, credential: loser.credential, stamp: loser.stamp, winner: remote.stamp, kept: now),
                     spaceIndex: spaceIndex, userIndex: userIndex)
        }
        try transaction.upsert(keys.encrypt(
            credential, in: space, spaceIndex: spaceIndex, userIndex: userIndex, created: row?.created ?? now, modified: now))
        let existed = stored != nil || sessionCredential != nil
        try log(stored == nil ? .added : .updated, space, remote.user, .synchronizable)
        announce(existed ? .updated : .added, space, remote.user, .synchronizable)
        if loser != nil { noteConflict(space, remote.user, kept: true) }
        if removalLost { noteConflict(space, remote.user, kept: false) }
        return existed ? .updated : .added
    }

    /// Merges one remote default choice's register; returns the register, when it replaced the
    /// local one. ``settleDefault(of:spaceIndex:replacedRegister:arrived:)`` then moves the pointer.
    mutating func merge(_ remote: BundleDefault, spaceIndex: BlindIndex) throws -> SyncDefaultState? {
        try Credential.validate(user: remote.user, password: nil)
        let ledger = ledger
        if let local = try ledger.defaultChoice(spaceIndex: spaceIndex), local.stamp >= remote.stamp { return nil }
        let register = SyncDefaultState(space: remote.space, user: remote.user, stamp: remote.stamp)
        try ledger.record(register, spaceIndex: spaceIndex)
        return register
    }

    /// Points the space's default where its register says, once an import has merged the space's
    /// items and registers: at the named user when it is a synchronizable credential here, and
    /// nowhere (among synchronizable users) otherwise. Whatever the order in which items and
    /// registers arrived, every machine ends with the same default.
    ///
    /// Only what the import touched moves: a register it replaced, or the arrival of the user the
    /// register names. A default chosen here outside sync (a permanent user) is never overridden.
    ///
    /// `replacedRegister` is the register the import wrote for the space, if it replaced the local
    /// one: it is used as is rather than read back and opened again. Otherwise `arrival` is the
    /// user the local register names, with its blind index, when the import wrote that user's
    /// synchronizable credential (it is known to be there, and is not read back either); without
    /// either, the import moved nothing the default depends on.
    mutating func settleDefault(
        of space: ProtectionSpace, spaceIndex: BlindIndex, replacedRegister: SyncDefaultState?,
        arrival: (user: String, userIndex: BlindIndex)?
    ) throws {
        guard replacedRegister != nil || arrival != nil,
              let register = try replacedRegister ?? ledger.defaultChoice(spaceIndex: spaceIndex)
        else { return }
        let arrival = arrival.flatMap { $0.user == register.user ? $0 : nil }
        let current = try transaction.defaultChoice(space: spaceIndex)
        if let user = register.user {
            let userIndex = arrival?.userIndex ?? keys.userIndex(spaceIndex: spaceIndex, user: user)
            let isSynchronizable = try arrival != nil
                || transaction.credential(space: spaceIndex, user: userIndex)?.persistence == .synchronizable
            if isSynchronizable {
                guard current?.userIndex != userIndex else { return }
                try transaction.setDefaultChoice(keys.encryptDefault(user: user, spaceIndex: spaceIndex, userIndex: userIndex))
                if session[space].defaultUser != nil { session.setDefault(nil, in: space) }
                try log(.defaultChanged, space, user, .synchronizable)
                announce(.defaultChanged, space, user, .synchronizable)
                return
            }
        }
        // No synchronizable user to point at: clear a pointer at a synchronizable user.
        if let current, try transaction.credential(space: spaceIndex, user: current.userIndex)?.persistence != .permanent {
            try transaction.deleteDefaultChoice(space: spaceIndex)
        }
    }
}
