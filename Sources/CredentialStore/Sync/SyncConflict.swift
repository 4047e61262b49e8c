package import CredentialStoreCore

/// A synchronizable credential whose change on this machine lost to a concurrent change made on
/// another one, as an import reports it (``ImportReport/conflicts``). It names the credential,
/// never a password.
public struct SyncConflict: Hashable, Sendable, Codable {
    /// The credential's protection space.
    public var space: ProtectionSpace
    /// The credential's user.
    public var user: String
    /// Whether the losing version was kept (``SyncDevice/keptVersions(of:in:)``); false when
    /// one of the two was a removal: the winner (nothing of the credential is kept), or this
    /// store's own (the credential is back, and nothing was lost to keep).
    public var kept: Bool

    /// Creates a conflict.
    package init(space: ProtectionSpace, user: String, kept: Bool) {
        self.space = space
        self.user = user
        self.kept = kept
    }
}
