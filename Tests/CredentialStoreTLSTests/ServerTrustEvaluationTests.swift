import CredentialStoreCore
import CredentialStoreTLS
import CredentialStoreTestSupport
import Foundation
import Testing

/// `ServerTrust.evaluate(chain:host:)` on chains openssl made, without a network.
@Suite struct ServerTrustEvaluationTests {
    @Test func chainToAStoredAnchorIsTrustedForTheNamesItsCertificateCarries() async throws {
        let pki = try TestPKI()
        let trust = ServerTrust(anchors: [try pki.der("ca.pem")])
        let server = try pki.der("server.pem")

        let byName = try await trust.evaluate(chain: [server], host: "localhost")
        let byAddress = try await trust.evaluate(chain: [server], host: "127.0.0.1")
        // Leaf to anchor.
        #expect(byName == [server, try pki.der("ca.pem")])
        #expect(byAddress == byName)
    }

    @Test func aNameTheCertificateDoesNotCarryIsANameMismatch() async throws {
        let pki = try TestPKI()
        let trust = ServerTrust(anchors: [try pki.der("ca.pem")])
        let server = try pki.der("server.pem")

        await #expect(throws: ServerTrustError.nameMismatch(host: "example.org")) {
            try await trust.evaluate(chain: [server], host: "example.org")
        }
        await #expect(throws: ServerTrustError.nameMismatch(host: "127.0.0.2")) {
            try await trust.evaluate(chain: [server], host: "127.0.0.2")
        }
    }

    @Test func withoutTheAnchorTheTestCAIsUntrusted() async throws {
        let pki = try TestPKI()
        let server = try pki.der("server.pem")

        // The system's roots alone: the test CA is not among them.
        let error = await #expect(throws: ServerTrustError.self) {
            try await ServerTrust().evaluate(chain: [server], host: "localhost")
        }
        guard case .untrustedChain = error else {
            Issue.record("expected untrustedChain, got \(String(describing: error))")
            return
        }
    }

    @Test func anAnchorMakesASelfSignedServerTrusted() async throws {
        let pki = try TestPKI()
        let selfSigned = try pki.der("selfsigned.pem")

        let error = await #expect(throws: ServerTrustError.self) {
            try await ServerTrust().evaluate(chain: [selfSigned], host: "localhost")
        }
        if case .untrustedChain = error {} else { Issue.record("expected untrustedChain, got \(String(describing: error))") }

        let verified = try await ServerTrust(anchors: [selfSigned]).evaluate(chain: [selfSigned], host: "localhost")
        #expect(verified == [selfSigned])
        // The anchor vouches for the certificate, not for other names.
        await #expect(throws: ServerTrustError.nameMismatch(host: "example.org")) {
            try await ServerTrust(anchors: [selfSigned]).evaluate(chain: [selfSigned], host: "example.org")
        }
    }

    @Test func pinsAreCheckedAgainstEveryCertificateOfTheVerifiedChain() async throws {
        let pki = try TestPKI()
        let ca = try pki.der("ca.pem")
        let server = try pki.der("server.pem")
        let serverPin = try #require(PublicKeyPin(certificate: server))
        let caPin = try #require(PublicKeyPin(certificate: ca))
        let otherPin = try #require(PublicKeyPin(certificate: try pki.der("backup.pem")))

        try await ServerTrust(pins: [serverPin], anchors: [ca]).evaluate(chain: [server], host: "localhost")
        // A pin of the CA's key holds for every certificate it issues.
        try await ServerTrust(pins: [caPin], anchors: [ca]).evaluate(chain: [server], host: "localhost")
        await #expect(throws: ServerTrustError.noPinnedKey) {
            try await ServerTrust(pins: [otherPin], anchors: [ca]).evaluate(chain: [server], host: "localhost")
        }
    }

    @Test func emptyAndMalformedChainsAreRefusedByName() async throws {
        await #expect(throws: ServerTrustError.emptyChain) {
            try await ServerTrust().evaluate(chain: [], host: "localhost")
        }
        await #expect(throws: ServerTrustError.malformedCertificate(index: 0)) {
            try await ServerTrust().evaluate(chain: [[0x30, 0x03, 0x02, 0x01, 0x00]], host: "localhost")
        }
    }

    @Test func pinEqualsWhatOpensslComputes() throws {
        let pki = try TestPKI()
        for name in ["server.pem", "client.pem", "ca.pem"] {
            let openssl = try pki.sh(
                "openssl x509 -in \(name) -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64")
            let pin = try #require(PublicKeyPin(certificate: try pki.der(name)))
            #expect(pin.description == "sha256//" + openssl, "\(name)")
        }
        #expect(PublicKeyPin(certificate: [1, 2, 3]) == nil)
    }

    @Test func pinOfABackupKeyWithoutACertificateEqualsThePinOfItsCertificate() throws {
        let pki = try TestPKI()
        try pki.openssl(["pkey", "-in", "backup.key", "-pubout", "-outform", "der", "-out", "backup.spki"])
        let fromKey = PublicKeyPin(subjectPublicKeyInfo: try pki.bytes("backup.spki"))
        #expect(fromKey == PublicKeyPin(certificate: try pki.der("backup.pem")))
    }

    @Test func summaryShowsSubjectIssuerValidityAndPin() throws {
        let pki = try TestPKI()
        let client = try pki.der("client.pem")
        let summary = try #require(CertificateSummary(certificate: client))
        #expect(summary.subject == "CN=credstore test client")
        #expect(summary.issuer == "CN=credstore test CA")
        #expect(summary.notBefore < Date())
        // -days 2
        #expect(abs(summary.notAfter.timeIntervalSince(summary.notBefore) - 2 * 86_400) < 5)
        #expect(summary.publicKeyPin == PublicKeyPin(certificate: client))
        #expect(CertificateSummary(certificate: Array("not a certificate".utf8)) == nil)
    }
}
