package import CredentialStoreCore
public import Foundation

/// A version of a synchronizable credential that lost a concurrent edit to another machine's,
/// kept in this store so that it can be seen and restored (``SyncDevice/keptVersions(of:in:)``,
/// ``SyncDevice/restore(_:)``).
///
/// It is kept as long as deletions are remembered after it was replaced (180 days and more,
/// docs/sync-format.md), at most
/// ``SyncDevice/keptVersionsPerCredential`` per credential, and goes when the credential
/// is removed. It never travels in a sync bundle. Its `description` names the space, user and
/// times, never the password.
public struct KeptVersion: Hashable, Sendable, CustomStringConvertible {
    /// The credential's protection space.
    public var space: ProtectionSpace
    /// The credential as it was (synchronizable, with its password and details).
    public var credential: Credential
    /// When this version was written, by the clock of the device that wrote it.
    public var written: Date
    /// The device id (hex) of the store that wrote it: this one.
    public var writtenBy: String
    /// When this store replaced it with the winner of the concurrent edit.
    public var replaced: Date
    /// The device id (hex) of the store that wrote the winning version.
    public var replacedBy: String

    /// Creates a kept version.
    package init(space: ProtectionSpace, credential: Credential, written: Date, writtenBy: String, replaced: Date, replacedBy: String) {
        self.space = space
        self.credential = credential
        self.written = written
        self.writtenBy = writtenBy
        self.replaced = replaced
        self.replacedBy = replacedBy
    }

    /// The user, the space's host and the times: never the password.
    public var description: String {
        "KeptVersion(user: \(String(reflecting: credential.user)), host: \(space.host), written: \(written), replaced: \(replaced))"
    }
}
