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

    /// The tier as the store writes it: the `persistence` column, and a byte of the associated data
    /// and of the change log's plaintext. Part of the on-disk format, so it lives with the tier and
    /// not with any one of its writers.
    package var storedCode: Int {
        switch self {
        case .none: 0
        case .forSession: 1
        case .permanent: 2
        case .synchronizable: 3
        }
    }

    /// The tier a stored code names: only the two that reach the disk.
    package init?(storedCode code: Int64) {
        switch code {
        case 2: self = .permanent
        case 3: self = .synchronizable
        default: return nil
        }
    }
}
