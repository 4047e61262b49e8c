public import CredentialStoreCore

/// A synchronizable credential an import dropped because this store had not merged the bundle's
/// device for longer than deletions are remembered: that device may have deleted it meanwhile
/// (docs/sync-format.md, "Stale devices"). Its password is not kept.
public struct DroppedCredential: Hashable, Sendable, Codable {
    /// The credential's protection space.
    public var space: ProtectionSpace
    /// The credential's user.
    public var user: String

    /// Names a dropped credential.
    package init(space: ProtectionSpace, user: String) {
        self.space = space
        self.user = user
    }
}
