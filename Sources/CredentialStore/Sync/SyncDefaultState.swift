import CredentialStoreCore

/// The last-writer-wins default choice of one space; `user` nil means "no default".
struct SyncDefaultState: Hashable, Sendable {
    var space: ProtectionSpace
    var user: String?
    var stamp: HybridTimestamp
}
