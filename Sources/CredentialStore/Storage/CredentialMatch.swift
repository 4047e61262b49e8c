public import CredentialStoreCore

/// What ``CredentialStorage/defaultCredential(answering:)`` found, and where.
///
/// The space may be another than the one asked about (a compatible method's, or the origin's
/// without a realm): it is the one a later ``CredentialStorage/remove(user:for:options:)`` or
/// ``CredentialStorage/update(user:for:options:_:)`` of the credential must name.
public struct CredentialMatch: Hashable, Sendable {
    /// The protection space the credential is the default of.
    public let space: ProtectionSpace
    /// The credential.
    public let credential: Credential

    package init(space: ProtectionSpace, credential: Credential) {
        self.space = space
        self.credential = credential
    }
}
