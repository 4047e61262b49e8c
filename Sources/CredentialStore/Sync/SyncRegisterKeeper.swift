import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

/// Keeps the sync registers of a local write in step with the credential rows and default
/// choices it changed, as a step of the ``WritePipeline``: the mutation's rules write rows, and
/// this step, told of the rows by the persistence layer, records their registers.
///
/// For each credential row the write touched, in order: a synchronizable row now gets a live
/// register with a fresh clock reading; a row that left the tier or was deleted, whose register
/// was live, gets a tombstone. For each default choice it wrote: a choice of a synchronizable
/// credential gets a default register; a choice it deleted, whose user has a register, becomes
/// "no default" everywhere.
///
/// An import does not use it: a merge writes the remote registers, with their stamps, itself.
final class SyncRegisterKeeper {
    /// A row's space and user indexes, held inline: a write of 100,000 credentials (an import)
    /// keeps one per row until its end, and two heap arrays each came to some 300 bytes a row.
    private struct Indexes: Hashable {
        var space: (UInt64, UInt64)
        var user: (UInt64, UInt64)

        init?(_ key: [UInt8]) {
            precondition(StoreKeyring.indexBytes == 16, "an index is held as two words")
            guard key.count == 32 else { return nil }
            func word(_ offset: Int) -> UInt64 {
                key[offset..<offset + 8].reduce(0) { $0 << 8 | UInt64($1) }
            }
            (space, user) = ((word(0), word(8)), (word(16), word(24)))
        }

        private static func bytes(_ words: (UInt64, UInt64)) -> BlindIndex {
            BlindIndex([words.0, words.1].flatMap { word in (0..<8).reversed().map { UInt8(truncatingIfNeeded: word >> (8 * $0)) } })
        }

        var spaceIndex: BlindIndex { Self.bytes(space) }
        var userIndex: BlindIndex { Self.bytes(user) }

        static func == (left: Indexes, right: Indexes) -> Bool {
            left.space == right.space && left.user == right.user
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(space.0)
            hasher.combine(space.1)
            hasher.combine(user.0)
            hasher.combine(user.1)
        }
    }

    private enum Touched: Hashable {
        case credential(Indexes)
        /// A default choice written (`added`) or deleted (the user it named).
        case defaultChoice(Indexes, added: Bool)
    }

    /// What the write touched, first touch first, each once.
    private var touched: [Touched] = []
    private var seen: Set<Touched> = []

    /// Called by the pipeline for each sealed row the write removes or adds.
    func rowChanged(_ row: SealedRowFingerprint, added: Bool) {
        guard let indexes = Indexes(row.key) else { return }
        let entry: Touched
        switch row.table {
        case .credentials: entry = .credential(indexes)
        case .defaultChoices: entry = .defaultChoice(indexes, added: added)
        default: return
        }
        if seen.insert(entry).inserted { touched.append(entry) }
    }

    /// How many touched rows a write holds before ``keepRegistersIfMany(_:)`` records them.
    static let batch = 4096

    /// Records the registers of what the write touched so far, when that is ``batch`` rows or
    /// more: a write of many credentials (an import) then holds a bounded number of them.
    ///
    /// Only between two complete steps of the write (each credential's rules run whole): each
    /// register is recorded from the rows as they stand, and a row the write touches again is
    /// recorded again, so the last record is the one ``keepRegisters(_:)`` would have made.
    func keepRegistersIfMany(_ ledger: SyncLedger) throws {
        guard touched.count >= Self.batch else { return }
        try keepRegisters(ledger)
    }

    /// Records the registers of what the write touched; after the mutation's rules ran.
    func keepRegisters(_ ledger: SyncLedger) throws {
        let transaction = ledger.transaction, keys = ledger.keys
        let entries = touched
        touched = []
        seen = []
        for entry in entries {
            switch entry {
            case .credential(let indexes):
                let (spaceIndex, userIndex) = (indexes.spaceIndex, indexes.userIndex)
                if let row = try transaction.credential(space: spaceIndex, user: userIndex), row.persistence == .synchronizable {
                    let (space, credential) = try keys.decryptAll(row)
                    try ledger.record(
                        SyncItemState(space: space, user: credential.user, stamp: try ledger.tick(), deleted: false),
                        spaceIndex: spaceIndex, userIndex: userIndex)
                } else if var state = try ledger.item(spaceIndex: spaceIndex, userIndex: userIndex), !state.deleted {
                    state.deleted = true
                    state.unpublished = true
                    state.stamp = try ledger.tick()
                    try ledger.record(state, spaceIndex: spaceIndex, userIndex: userIndex)
                }
            case .defaultChoice(let indexes, added: true):
                let (spaceIndex, userIndex) = (indexes.spaceIndex, indexes.userIndex)
                // Still the choice, and of a synchronizable credential.
                guard let choice = try transaction.defaultChoice(space: spaceIndex), choice.userIndex == userIndex,
                      let row = try transaction.credential(space: spaceIndex, user: userIndex), row.persistence == .synchronizable
                else { continue }
                try ledger.record(SyncDefaultState(
                    space: try keys.decryptSpace(row), user: try keys.decryptDefault(choice), stamp: try ledger.tick()))
            case .defaultChoice(let indexes, added: false):
                let (spaceIndex, userIndex) = (indexes.spaceIndex, indexes.userIndex)
                // Deleted and not replaced: a synced default that goes away locally goes away everywhere.
                guard try transaction.defaultChoice(space: spaceIndex) == nil,
                      let register = try ledger.item(spaceIndex: spaceIndex, userIndex: userIndex)
                else { continue }
                try ledger.record(SyncDefaultState(space: register.space, user: nil, stamp: try ledger.tick()))
            }
        }
    }
}
