package import CredentialStore
#if canImport(FoundationNetworking)
package import FoundationNetworking
#else
package import Foundation
#endif

extension CredentialStorage {
    /// The credential that answers `challenge`, as `URLCredentialStorage.defaultCredential(for:)`
    /// would give it, found by value.
    ///
    /// The challenge's protection space names the method of the server's scheme
    /// (`NSURLAuthenticationMethodHTTPBasic`, …), where users store credentials with the default
    /// method and often without a realm; the lookup is
    /// ``/CredentialStore/CredentialStorage/defaultCredential(answering:)``, which finds them in
    /// its documented order and never sends a credential stored for Digest as Basic, nor a
    /// proxy's credential to a server. A challenge without a realm, or for anything but a password
    /// (server trust, a client certificate), gets `nil`.
    ///
    /// The credential keeps its stored persistence; a delegate that hands it to URLSession decides
    /// what Foundation may keep (``CredentialStoreSessionDelegate`` hands over a copy with
    /// `.none`).
    ///
    /// - Throws: The store's integrity and I/O errors only: a realm the store cannot hold is the
    ///   server's doing and gives `nil`.
    package func credential(for challenge: URLAuthenticationChallenge) throws -> URLCredential? {
        let space = ProtectionSpace(challenge.protectionSpace)
        guard AuthenticationMethod.passwordMethods.contains(space.authenticationMethod), let realm = space.realm, !realm.isEmpty else { return nil }
        do {
            return try defaultCredential(answering: .challenge(space)).map { URLCredential($0.credential) }
        } catch let error as CredentialStorageError where CredentialChallengeResponder.isChallengeContentError(error) {
            return nil
        }
    }
}
