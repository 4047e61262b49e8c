package import CredentialStoreCore

/// A synchronizable credential whose change on this machine lost to a concurrent change made on
/// another one, as an import reports it (``ImportReport/conflicts``). It names the credential,
/// never a password.
public struct SyncConflict: Hashable, Sendable, Codable {
    /// The credential's protection space.
    public var space: ProtectionSpace
    /// The credential's user.
    public var user: String
    /// Whether the losing version was kept (``CredentialStorage/keptVersions(of:in:)``); false when
    /// the winner was a removal, after which nothing of the credential is kept.
    public var kept: Bool

    /// Creates a conflict.
    public init(space: ProtectionSpace, user: String, kept: Bool) {
        self.space = space
        self.user = user
        self.kept = kept
    }
}
