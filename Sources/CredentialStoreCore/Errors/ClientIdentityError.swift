/// Why certificates and a key could not be made into a ``/CredentialStoreCore/ClientIdentity``.
///
/// No case carries key material, a password or a certificate's subject, so the error can be shown
/// or logged as it is.
public enum ClientIdentityError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The text or bundle holds no certificate.
    case noCertificate
    /// The text or bundle holds no private key.
    case noPrivateKey
    /// More than one private key: which one belongs to the leaf would be a guess.
    case severalPrivateKeys
    /// A certificate is not DER X.509 (or its PEM is damaged).
    case malformedCertificate
    /// The key is damaged, encrypted, or of a kind this library cannot use (it reads RSA, P-256,
    /// P-384, P-521 and Ed25519 keys, in PKCS #8, PKCS #1 or SEC 1).
    case unsupportedPrivateKey
    /// The key is not the one whose public half the leaf certificate (the first) carries.
    case keyDoesNotMatchCertificate
    /// The PKCS #12 bundle does not open with the password given.
    case wrongPassword
    /// The bytes are not a PKCS #12 bundle.
    case malformedBundle

    /// What went wrong, in words that name no secret.
    public var description: String {
        switch self {
        case .noCertificate: "no certificate found"
        case .noPrivateKey: "no private key found"
        case .severalPrivateKeys: "more than one private key found"
        case .malformedCertificate: "a certificate is not valid DER X.509"
        case .unsupportedPrivateKey: "the private key is damaged, encrypted or of an unsupported kind"
        case .keyDoesNotMatchCertificate: "the private key does not belong to the leaf certificate"
        case .wrongPassword: "the PKCS #12 bundle does not open with this password"
        case .malformedBundle: "not a PKCS #12 bundle"
        }
    }
}
