public import CredentialStoreCore
public import Foundation
import X509

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

    /// Reads the summary of a DER certificate; `nil` when the bytes are not DER X.509.
    ///
    /// - Parameter certificate: One certificate in DER.
    public init?(certificate: [UInt8]) {
        guard let parsed = DERCertificate.certificate(certificate), let pin = PublicKeyPin(certificate: certificate) else {
            return nil
        }
        subject = parsed.subject.description
        issuer = parsed.issuer.description
        notBefore = parsed.notValidBefore
        notAfter = parsed.notValidAfter
        publicKeyPin = pin
    }
}

extension ClientIdentity {
    /// The summary of the leaf certificate, the identity's own; `nil` for an identity without a
    /// readable leaf.
    public var leafSummary: CertificateSummary? {
        certificateChain.first.flatMap { CertificateSummary(certificate: $0) }
    }
}
