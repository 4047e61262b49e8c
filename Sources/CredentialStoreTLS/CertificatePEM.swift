public import CredentialStoreCore
import SwiftASN1

/// Certificates alone in PEM: anchors read from a CA file, and written for tools that read files.
public enum CertificatePEM {
    /// The DER of every `CERTIFICATE` block of `pem`, in order; other blocks are skipped.
    ///
    /// - Throws: ``/CredentialStoreCore/ClientIdentityError/malformedCertificate`` for damaged PEM or a block that is
    ///   not X.509, ``/CredentialStoreCore/ClientIdentityError/noCertificate`` for text without one.
    public static func decode(_ pem: String) throws(ClientIdentityError) -> [[UInt8]] {
        let documents: [PEMDocument]
        do { documents = try PEMDocument.parseMultiple(pemString: pem) } catch { throw .malformedCertificate }
        let certificates = documents.filter { $0.discriminator == "CERTIFICATE" }.map(\.derBytes)
        guard !certificates.isEmpty else { throw .noCertificate }
        guard certificates.allSatisfy({ DERCertificate.certificate($0) != nil }) else { throw .malformedCertificate }
        return certificates
    }

    /// One `CERTIFICATE` block per DER certificate, in order.
    public static func encode(_ certificates: [[UInt8]]) -> String {
        certificates.map { PEMDocument(type: "CERTIFICATE", derBytes: $0).pemString + "\n" }.joined()
    }
}
