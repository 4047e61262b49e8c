package import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
public import Foundation

/// One effective change to a store, as ``CredentialStorage/changes()`` delivers it.
///
/// A change names the space, the user and the tier, never the password.
public struct CredentialChange: Hashable, Sendable {
    /// What happened.
    public enum Kind: String, Hashable, Sendable, Codable {
        /// A user got a credential in a space where it had none.
        case added
        /// A user's password or tier changed.
        case updated
        /// A user's credential was removed.
        case removed
        /// The space's default credential became this user's.
        case defaultChanged
        /// The user's credential changed here and, concurrently, on another machine, whose change
        /// won (an import replaced it): the version that lost is kept
        /// (``SyncDevice/keptVersions(of:in:)``) unless the winner was a removal. Announced
        /// to this instance's subscribers only, after the credential's ``updated`` or ``removed``.
        case conflict
    }

    /// Where the change was made.
    public enum Origin: String, Hashable, Sendable, Codable {
        /// By this process: this ``CredentialStorage`` instance, or another one on the same store
        /// file in the same process.
        case thisProcess
        /// By another process on the same store file.
        case otherProcess
        /// By importing a sync bundle.
        case syncImport
    }

    /// What happened.
    public var kind: Kind
    /// The protection space it happened in.
    public var space: ProtectionSpace
    /// The user whose credential (or default choice) changed.
    public var user: String
    /// The credential's tier after the change (before it, for ``Kind/removed``).
    public var persistence: Persistence
    /// Who made the change.
    public var origin: Origin

    /// Creates a change.
    package init(kind: Kind, space: ProtectionSpace, user: String, persistence: Persistence, origin: Origin) {
        self.kind = kind
        self.space = space
        self.user = user
        self.persistence = persistence
        self.origin = origin
    }
}

extension CredentialChange: Codable {}

extension CredentialChange.Kind {
    /// The change log's stable integer for this kind.
    var code: Int {
        switch self {
        case .added: 1
        case .updated: 2
        case .removed: 3
        case .defaultChanged: 4
        case .conflict: 5
        }
    }

    init?(code: Int) {
        switch code {
        case 1: self = .added
        case 2: self = .updated
        case 3: self = .removed
        case 4: self = .defaultChanged
        case 5: self = .conflict
        default: return nil
        }
    }
}

extension Notification.Name {
    /// Posted on `NotificationCenter.default` after each effective change, with the
    /// ``CredentialStorage`` as the object and the ``CredentialChange`` under
    /// ``CredentialStorage/changeUserInfoKey`` in `userInfo`.
    ///
    /// The raw value is Foundation's own, `"NSURLCredentialStorageChangedNotification"`, so code
    /// written against `URLCredentialStorage` keeps observing the same name.
    public static let credentialStorageChanged = Notification.Name("NSURLCredentialStorageChangedNotification")
}
