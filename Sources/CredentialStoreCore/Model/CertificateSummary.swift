public import Foundation

/// What a listing shows of a certificate: whose it is, who issued it, when it is valid, and the
/// pin of its key.
public struct CertificateSummary: Hashable, Sendable {
    /// The subject's distinguished name, as RFC 4514 writes it (`CN=client,O=Example`).
    public var subject: String
    /// The issuer's distinguished name, as RFC 4514 writes it.
    public var issuer: String
    /// The first moment the certificate is valid.
    public var notBefore: Date
    /// The last moment the certificate is valid.
    public var notAfter: Date
    /// The pin of the certificate's public key.
    public var publicKeyPin: PublicKeyPin

    /// The summary as read from a certificate (CredentialStoreTLS's `init(certificate:)`, which
    /// parses X.509).
    package init(subject: String, issuer: String, notBefore: Date, notAfter: Date, publicKeyPin: PublicKeyPin) {
        self.subject = subject
        self.issuer = issuer
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.publicKeyPin = publicKeyPin
    }
}
