package import CredentialStore

/// What the TLS commands (`identity`, `pin`, and `curl-args` when it writes PEM) need of
/// swift-certificates and swift-nio-ssl: reading certificates and keys, writing PEM, and fetching
/// a server's chain.
///
/// `credstore` links neither library: together with swift-nio and their two copies of BoringSSL
/// they were about two thirds of its build and of the conformance records every command's start-up
/// scans (docs/architecture.md, "The TLS half"). `credstore-tls`, the same tool with the TLS
/// libraries linked, installs the implementation before it parses; `credstore` hands a TLS command
/// to it (``TLSCommands/toolkit()``).
package protocol TLSToolkit: Sendable {
    /// The identity in one PEM text: the certificates, leaf first, and the leaf's key.
    func identity(pem: String) throws(ClientIdentityError) -> ClientIdentity
    /// The identity in a PKCS #12 bundle.
    func identity(pkcs12: [UInt8], password: String) throws(ClientIdentityError) -> ClientIdentity
    /// The DER of every certificate of a PEM text.
    func certificates(pem: String) throws(ClientIdentityError) -> [[UInt8]]
    /// One `CERTIFICATE` block per DER certificate.
    func pem(certificates: [[UInt8]]) -> String
    /// The identity's key as a PKCS #8 `PRIVATE KEY` block: the secret itself.
    func pemPrivateKey(of identity: ClientIdentity) -> String
    /// Subject, issuer, validity and pin of a DER certificate; nil when it is not X.509.
    func summary(of certificate: [UInt8]) -> CertificateSummary?
    /// The certificates `host` presents on `port`, leaf first, whether or not they verify.
    func serverCertificates(host: String, port: Int) throws -> [[UInt8]]
}
