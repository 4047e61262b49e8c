import CredentialStoreCore
import CredentialStoreNIOSSL
import CredentialStoreTLS
import CredentialStoreTestSupport
import Foundation
import Testing

/// Identities read from what openssl writes: PEM in its several key forms, and PKCS #12.
@Suite struct ClientIdentityImportTests {
    @Test func pemIdentityHoldsTheChainAPKCS8KeyAndTheLeafsExpiry() throws {
        let pki = try TestPKI()
        let identity = try ClientIdentity(pem: try pki.text("client.pem") + pki.text("ca.pem") + "\n" + pki.text("client.key"))
        #expect(identity.certificateChain == [try pki.der("client.pem"), try pki.der("ca.pem")])
        try pki.openssl(["pkcs8", "-topk8", "-nocrypt", "-in", "client.key", "-outform", "der", "-out", "client.pk8"])
        #expect(identity.privateKey == (try pki.bytes("client.pk8")))
        #expect(identity.expires == CertificateSummary(certificate: try pki.der("client.pem"))?.notAfter)
        #expect(identity.leafSummary?.subject == "CN=credstore test client")

        // One text, key first, with openssl's traditional RSA form: the same identity.
        try pki.openssl(["rsa", "-in", "client.key", "-traditional", "-out", "client.rsa.key"])
        #expect(try pki.text("client.rsa.key").contains("BEGIN RSA PRIVATE KEY"))
        let oneText = try ClientIdentity(pem: "Bag Attributes: ignored\n" + pki.text("client.rsa.key") + pki.text("client.pem") + pki.text("ca.pem"))
        #expect(oneText == identity)
    }

    @Test func ecKeysInSEC1ArePKCS8Too() throws {
        let pki = try TestPKI()
        try pki.openssl(["ec", "-in", "server.key", "-out", "server.sec1.key"])
        #expect(try pki.text("server.sec1.key").contains("BEGIN EC PRIVATE KEY"))
        let sec1 = try ClientIdentity(pem: try pki.text("server.pem") + "\n" + pki.text("server.sec1.key"))
        let pkcs8 = try ClientIdentity(pem: try pki.text("server.pem") + "\n" + pki.text("server.key"))
        #expect(sec1 == pkcs8)
        // openssl reads the key it is given back.
        try Data(pkcs8.pemPrivateKey.utf8).write(to: pki.url("exported.key"))
        #expect(try pki.openssl(["pkey", "-in", "exported.key", "-pubout"]) == (try pki.openssl(["pkey", "-in", "server.key", "-pubout"])))
    }

    @Test func exportedPEMReadsBackAsTheSameIdentity() throws {
        let pki = try TestPKI()
        let identity = try ClientIdentity(pem: try pki.text("client.pem") + pki.text("ca.pem") + "\n" + pki.text("client.key"))
        #expect(try ClientIdentity(pem: identity.pemCertificates + identity.pemPrivateKey) == identity)
        try Data(identity.pemCertificates.utf8).write(to: pki.url("exported.pem"))
        #expect(try pki.openssl(["x509", "-in", "exported.pem", "-noout", "-subject"]) == "subject=CN = credstore test client")
    }

    @Test func aKeyThatIsNotTheLeafsAndMissingPartsAreRefusedByName() throws {
        let pki = try TestPKI()
        #expect(throws: ClientIdentityError.keyDoesNotMatchCertificate) {
            try ClientIdentity(pem: try pki.text("client.pem") + "\n" + pki.text("server.key"))
        }
        #expect(throws: ClientIdentityError.noPrivateKey) { try ClientIdentity(pem: try pki.text("client.pem")) }
        #expect(throws: ClientIdentityError.noCertificate) { try ClientIdentity(pem: try pki.text("client.key")) }
        #expect(throws: ClientIdentityError.severalPrivateKeys) {
            try ClientIdentity(pem: try pki.text("client.pem") + pki.text("client.key") + pki.text("server.key"))
        }
        try pki.openssl(["pkcs8", "-topk8", "-in", "client.key", "-passout", "pass:secret", "-out", "client.enc.key"])
        #expect(throws: ClientIdentityError.unsupportedPrivateKey) {
            try ClientIdentity(pem: try pki.text("client.pem") + "\n" + pki.text("client.enc.key"))
        }
    }

    @Test func pkcs12FromOpensslImportsAsThePEMIdentity() throws {
        let pki = try TestPKI()
        try pki.openssl(["pkcs12", "-export", "-in", "client.pem", "-inkey", "client.key", "-certfile", "ca.pem",
                         "-passout", "pass:correct horse", "-out", "client.p12"])
        let fromPEM = try ClientIdentity(pem: try pki.text("client.pem") + pki.text("ca.pem") + "\n" + pki.text("client.key"))

        let fromBundle = try ClientIdentity(pkcs12: try pki.bytes("client.p12"), password: "correct horse")
        #expect(fromBundle == fromPEM)

        let error = #expect(throws: ClientIdentityError.wrongPassword) {
            try ClientIdentity(pkcs12: try pki.bytes("client.p12"), password: "wrong horse")
        }
        let text = error.map { "\($0)" } ?? ""
        #expect(!text.contains("horse"))
    }

    @Test func pkcs12WithoutAKeyOrNotPKCS12IsRefusedWithoutStoppingTheProcess() throws {
        let pki = try TestPKI()
        try pki.openssl(["pkcs12", "-export", "-nokeys", "-in", "client.pem", "-passout", "pass:pw", "-out", "certs.p12"])
        // swift-nio-ssl would stop the process on this bundle; the import refuses it first.
        #expect(throws: ClientIdentityError.noPrivateKey) {
            try ClientIdentity(pkcs12: try pki.bytes("certs.p12"), password: "pw")
        }
        #expect(throws: ClientIdentityError.malformedBundle) {
            try ClientIdentity(pkcs12: try pki.bytes("client.pem"), password: "pw")
        }
    }
}
