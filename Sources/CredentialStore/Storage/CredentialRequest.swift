public import CredentialStoreCore
public import Foundation

/// What a rule lookup answers, for ``CredentialStorage/defaultCredential(answering:)``: a
/// challenge that named its protection space, or a request about to be sent.
public enum CredentialRequest: Hashable, Sendable {
    /// A server's 401 or a proxy's 407 that named this realm and method: the space itself, the
    /// same realm under a compatible method, then the origin's credential stored without a realm.
    case challenge(ProtectionSpace)
    /// A request to the URL's scheme, host and port, with `realm` when the caller knows it: the
    /// realm's default, else the origin's credential without a realm; without a realm, the one
    /// realm on the origin whose default may be sent as Basic.
    case request(URL, realm: String? = nil)
}
