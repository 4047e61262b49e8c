/// How long, and how far, a credential is kept.
///
/// The tiers mirror `URLCredential.Persistence`, except that here `.permanent` really persists and
/// `.synchronizable` really travels (in export bundles) instead of being dropped.
public enum Persistence: String, Hashable, Sendable, Codable, CaseIterable {
    /// Not kept at all: setting such a credential stores nothing and announces nothing.
    case none
    /// Kept in the memory of one `CredentialStorage` instance; never written to disk.
    case forSession
    /// Encrypted on disk; survives restarts; never leaves this machine.
    case permanent
    /// Encrypted on disk, and carried to other machines by export bundles.
    case synchronizable

    /// Whether credentials of this tier are written to the store file.
    package var isStoredOnDisk: Bool { self == .permanent || self == .synchronizable }
}
