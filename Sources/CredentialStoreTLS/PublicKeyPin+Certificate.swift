public import CredentialStoreCore
import Crypto

extension PublicKeyPin {
    /// The pin of the public key a DER certificate carries: the SHA-256 digest of its
    /// SubjectPublicKeyInfo, as `openssl x509 -pubkey | openssl pkey -pubin -outform der |
    /// openssl dgst -sha256` computes it.
    ///
    /// - Parameter certificate: One certificate in DER.
    /// - Returns: `nil` when the bytes are not a DER X.509 certificate.
    public init?(certificate: [UInt8]) {
        guard DERCertificate.certificate(certificate) != nil,
              let info = try? DERCertificate.subjectPublicKeyInfo(of: certificate)
        else { return nil }
        self.init(subjectPublicKeyInfo: info)
    }

    /// The pin of a DER SubjectPublicKeyInfo (a `PUBLIC KEY` PEM block's bytes), for pinning a key
    /// that no certificate carries yet: the backup key of a rotation.
    ///
    /// - Parameter subjectPublicKeyInfo: The key's SubjectPublicKeyInfo in DER.
    public init(subjectPublicKeyInfo: [UInt8]) {
        // A SHA-256 digest is 32 bytes, which is all that `init?(digest:)` asks.
        self.init(digest: Array(SHA256.hash(data: subjectPublicKeyInfo)))!
    }
}
