public import CredentialStoreCore
import X509

extension CertificateSummary {
    /// Reads the summary of a DER certificate; `nil` when the bytes are not DER X.509.
    ///
    /// - Parameter certificate: One certificate in DER.
    public init?(certificate: [UInt8]) {
        guard let parsed = DERCertificate.certificate(certificate), let pin = PublicKeyPin(certificate: certificate) else {
            return nil
        }
        self.init(subject: parsed.subject.description, issuer: parsed.issuer.description,
                  notBefore: parsed.notValidBefore, notAfter: parsed.notValidAfter, publicKeyPin: pin)
    }
}

extension ClientIdentity {
    /// The summary of the leaf certificate, the identity's own; `nil` for an identity without a
    /// readable leaf.
    public var leafSummary: CertificateSummary? {
        certificateChain.first.flatMap { CertificateSummary(certificate: $0) }
    }
}
