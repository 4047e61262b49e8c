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
    private enum Touched: Hashable {
        case credential(space: BlindIndex, user: BlindIndex)
        /// A default choice written (`added`) or deleted (the user it named).
        case defaultChoice(space: BlindIndex, user: BlindIndex, added: Bool)
    }

    /// What the write touched, first touch first, each once.
    private var touched: [Touched] = []
    private var seen: Set<Touched> = []

    /// Called by the pipeline for each sealed row the write removes or adds.
    func rowChanged(_ row: SealedRowFingerprint, added: Bool) {
        let split = StoreKeyring.indexBytes
        guard row.key.count == 2 * split else { return }
        let space = BlindIndex(Array(row.key.prefix(split))), user = BlindIndex(Array(row.key.suffix(split)))
        let entry: Touched
        switch row.table {
        case .credentials: entry = .credential(space: space, user: user)
        case .defaultChoices: entry = .defaultChoice(space: space, user: user, added: added)
        default: return
        }
        if seen.insert(entry).inserted { touched.append(entry) }
    }

    /// Records the registers of what the write touched; once, after the mutation's rules ran.
    func keepRegisters(_ ledger: SyncLedger) throws {
        let transaction = ledger.transaction, keys = ledger.keys
        let entries = touched
        touched = []
        seen = []
        for entry in entries {
            switch entry {
            case .credential(let spaceIndex, let userIndex):
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
            case .defaultChoice(let spaceIndex, let userIndex, added: true):
                // Still the choice, and of a synchronizable credential.
                guard let choice = try transaction.defaultChoice(space: spaceIndex), choice.userIndex == userIndex,
                      let row = try transaction.credential(space: spaceIndex, user: userIndex), row.persistence == .synchronizable
                else { continue }
                try ledger.record(SyncDefaultState(
                    space: try keys.decryptSpace(row), user: try keys.decryptDefault(choice), stamp: try ledger.tick()))
            case .defaultChoice(let spaceIndex, let userIndex, added: false):
                // Deleted and not replaced: a synced default that goes away locally goes away everywhere.
                guard try transaction.defaultChoice(space: spaceIndex) == nil,
                      let register = try ledger.item(spaceIndex: spaceIndex, userIndex: userIndex)
                else { continue }
                try ledger.record(SyncDefaultState(space: register.space, user: nil, stamp: try ledger.tick()))
            }
        }
    }
}
