public import CredentialStoreCore
import Foundation
import SwiftASN1
import X509

extension ClientIdentity {
    /// Reads an identity from one PEM text holding the certificates, leaf first, and the leaf's
    /// private key, in any order between them (as `openssl pkcs12 -nodes` or a `cat` of the two
    /// files writes it).
    ///
    /// The key is kept in PKCS #8 whatever form it came in (`PRIVATE KEY`, `RSA PRIVATE KEY`,
    /// `EC PRIVATE KEY`), ``/CredentialStoreCore/ClientIdentity/expires`` is the leaf's `notAfter`,
    /// and the key must be the leaf's. Text outside the PEM blocks (openssl's "Bag Attributes")
    /// is ignored.
    ///
    /// - Parameter pem: The certificates and the key in PEM.
    /// - Throws: ``/CredentialStoreCore/ClientIdentityError``.
    public init(pem: String) throws(ClientIdentityError) {
        let documents: [PEMDocument]
        do {
            documents = try PEMDocument.parseMultiple(pemString: pem)
        } catch {
            // Which block is damaged is not told apart: the message must not quote the text.
            throw .malformedCertificate
        }
        var certificates: [[UInt8]] = []
        var keys: [PEMDocument] = []
        for document in documents {
            switch document.discriminator {
            case "CERTIFICATE": certificates.append(document.derBytes)
            case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY": keys.append(document)
            case "ENCRYPTED PRIVATE KEY": throw .unsupportedPrivateKey
            default: continue
            }
        }
        guard keys.count <= 1 else { throw .severalPrivateKeys }
        guard let keyDocument = keys.first else {
            if certificates.isEmpty { throw .noCertificate }
            throw .noPrivateKey
        }
        guard let key = try? Certificate.PrivateKey(pemDocument: keyDocument) else { throw .unsupportedPrivateKey }
        try self.init(checking: certificates, key: key)
    }

    /// Checks DER certificates and a key (any of PKCS #8, PKCS #1, SEC 1 in DER) and makes the
    /// identity; what PKCS #12 import ends in.
    package init(checkingCertificates certificates: [[UInt8]], privateKeyDER: [UInt8]) throws(ClientIdentityError) {
        guard !certificates.isEmpty else { throw .noCertificate }
        guard let key = DERCertificate.privateKey(der: privateKeyDER) else { throw .unsupportedPrivateKey }
        try self.init(checking: certificates, key: key)
    }

    private init(checking certificates: [[UInt8]], key: Certificate.PrivateKey) throws(ClientIdentityError) {
        guard !certificates.isEmpty else { throw .noCertificate }
        let parsed = certificates.map(DERCertificate.certificate)
        guard let leaf = parsed[0], !parsed.contains(where: { $0 == nil }) else { throw .malformedCertificate }
        // A key that is not the leaf's would fail every handshake, later and less clearly.
        guard key.publicKey == leaf.publicKey else { throw .keyDoesNotMatchCertificate }
        let pkcs8: [UInt8]
        do { pkcs8 = try DERCertificate.pkcs8(key) } catch { throw .unsupportedPrivateKey }
        self.init(certificateChain: certificates, privateKey: pkcs8, expires: leaf.notValidAfter)
    }

    /// The certificates in PEM, leaf first, one `CERTIFICATE` block each: what
    /// `openssl x509` and `curl --cert` read.
    public var pemCertificates: String {
        CertificatePEM.encode(certificateChain)
    }

    /// The private key in PEM (PKCS #8, `PRIVATE KEY`): what `curl --key` reads.
    ///
    /// This is the secret itself: write it only where the user asked for it, never to a log.
    public var pemPrivateKey: String {
        PEMDocument(type: "PRIVATE KEY", derBytes: privateKey).pemString + "\n"
    }
}
