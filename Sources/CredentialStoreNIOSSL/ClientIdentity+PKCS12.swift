public import CredentialStoreCore
import CredentialStoreTLS
import NIOSSL

extension ClientIdentity {
    /// Reads an identity from a PKCS #12 bundle (`.p12`, `.pfx`), as `openssl pkcs12 -export`, a
    /// browser or a keychain writes it.
    ///
    /// The key is kept in PKCS #8, ``/CredentialStoreCore/ClientIdentity/expires`` is the leaf's
    /// `notAfter`, and the chain is the leaf (the certificate matching the key) followed by the
    /// bundle's other certificates: the same identity as the one read from the same certificates
    /// and key in PEM.
    ///
    /// - Parameters:
    ///   - pkcs12: The bundle's bytes.
    ///   - password: The bundle's password; "" for a bundle without one.
    /// - Throws: ``/CredentialStoreCore/ClientIdentityError/wrongPassword``,
    ///   ``/CredentialStoreCore/ClientIdentityError/noPrivateKey`` (a bundle of certificates
    ///   alone), ``/CredentialStoreCore/ClientIdentityError/malformedBundle``, or what reading the
    ///   certificates and the key found. No error text holds the password or key material.
    public init(pkcs12: [UInt8], password: String) throws(ClientIdentityError) {
        // swift-nio-ssl stops the process (fatalError) on a bundle that opens without a key or
        // without a certificate for it, so a bundle must show a key bag, and a certificate bag or
        // an encrypted content that may hold one, before it is handed over.
        guard let survey = PKCS12Structure.survey(pkcs12) else { throw .malformedBundle }
        switch survey.keyBags {
        case 0: throw .noPrivateKey
        case 1: break
        default: throw .severalPrivateKeys
        }
        guard survey.certificateBags > 0 || survey.otherContents > 0 else { throw .noCertificate }
        let bundle: NIOSSLPKCS12Bundle
        do {
            bundle = try NIOSSLPKCS12Bundle(buffer: pkcs12, passphrase: Array(password.utf8))
        } catch {
            // BoringSSL reports a failed MAC check as INCORRECT_PASSWORD; anything else is damage.
            // Only the error's name is looked at: the text is never passed on.
            throw "\(error)".contains("INCORRECT_PASSWORD") ? .wrongPassword : .malformedBundle
        }
        let certificates: [[UInt8]]
        let key: [UInt8]
        do {
            certificates = try bundle.certificateChain.map { try $0.toDERBytes() }
            key = try bundle.privateKey.derBytes
        } catch {
            throw .malformedBundle
        }
        try self.init(checkingCertificates: certificates, privateKeyDER: key)
    }
}
