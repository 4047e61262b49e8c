import CredentialStore
import CredentialStoreCLI
import CredentialStoreNIOSSL
import CredentialStoreTLS

/// The TLS commands' toolkit from CredentialStoreTLS (swift-certificates) and CredentialStoreNIOSSL
/// (PKCS #12 and the server's chain, through swift-nio-ssl).
struct LinkedTLSToolkit: TLSToolkit {
    func identity(pem: String) throws(ClientIdentityError) -> ClientIdentity {
        try ClientIdentity(pem: pem)
    }

    func identity(pkcs12: [UInt8], password: String) throws(ClientIdentityError) -> ClientIdentity {
        try ClientIdentity(pkcs12: pkcs12, password: password)
    }

    func certificates(pem: String) throws(ClientIdentityError) -> [[UInt8]] {
        try CertificatePEM.decode(pem)
    }

    func pem(certificates: [[UInt8]]) -> String {
        CertificatePEM.encode(certificates)
    }

    func pemPrivateKey(of identity: ClientIdentity) -> String {
        identity.pemPrivateKey
    }

    func summary(of certificate: [UInt8]) -> CertificateSummary? {
        CertificateSummary(certificate: certificate)
    }

    func serverCertificates(host: String, port: Int) throws -> [[UInt8]] {
        try ServerCertificates.fetch(host: host, port: port)
    }
}
