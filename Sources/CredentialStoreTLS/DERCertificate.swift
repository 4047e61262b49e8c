import SwiftASN1
import X509

/// What the target reads out of DER certificates and keys, beside what swift-certificates offers.
enum DERCertificate {
    /// The SubjectPublicKeyInfo exactly as the certificate encodes it.
    ///
    /// Taken from the bytes rather than re-encoded from `Certificate.PublicKey`, because a pin is a
    /// digest of the encoding: openssl and curl hash the certificate's own bytes, and a re-encoding
    /// that differed in any detail (RSA parameters, a point's compression) would never match.
    static func subjectPublicKeyInfo(of certificate: [UInt8]) throws -> [UInt8] {
        // Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signature }
        // TBSCertificate ::= SEQUENCE { [0] version OPTIONAL, serialNumber, signature, issuer,
        //                               validity, subject, subjectPublicKeyInfo, … }
        let root = try DER.parse(certificate)
        guard case .constructed(let certificateNodes) = root.content,
              let tbs = certificateNodes.first(where: { _ in true }),
              case .constructed(let tbsNodes) = tbs.content
        else { throw ASN1Error.invalidASN1Object(reason: "not a certificate") }
        var fields = Array(tbsNodes)
        if fields.first?.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
            fields.removeFirst()
        }
        guard fields.count > 5, fields[5].identifier == .sequence else {
            throw ASN1Error.invalidASN1Object(reason: "no subjectPublicKeyInfo")
        }
        return Array(fields[5].encodedBytes)
    }

    /// A private key from DER in whatever form a tool wrote it: PKCS #8, or the algorithm's own
    /// (PKCS #1 for RSA, SEC 1 for elliptic curves), as BoringSSL's `i2d_PrivateKey` writes it.
    static func privateKey(der: [UInt8]) -> Certificate.PrivateKey? {
        for type in ["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY"] {
            if let key = try? Certificate.PrivateKey(pemDocument: PEMDocument(type: type, derBytes: der)) {
                return key
            }
        }
        return nil
    }

    /// The key in PKCS #8 DER, one encoding whatever form it came in, so that the same key read
    /// from PEM and from PKCS #12 makes equal identities.
    static func pkcs8(_ key: Certificate.PrivateKey) throws -> [UInt8] {
        let document = try key.serializeAsPEM()
        switch document.discriminator {
        case "PRIVATE KEY":
            return document.derBytes
        case "RSA PRIVATE KEY":
            // swift-crypto writes RSA keys as PKCS #1; PKCS #8 wraps that, with rsaEncryption and
            // NULL parameters (RFC 8017 A.1, RFC 5208).
            var serializer = DER.Serializer()
            try serializer.appendConstructedNode(identifier: .sequence) { coder in
                try coder.serialize(Int(0))
                try coder.appendConstructedNode(identifier: .sequence) { coder in
                    try coder.serialize(ASN1ObjectIdentifier.AlgorithmIdentifier.rsaEncryption)
                    try coder.serialize(ASN1Null())
                }
                try coder.serialize(ASN1OctetString(contentBytes: document.derBytes[...]))
            }
            return serializer.serializedBytes
        default:
            throw ASN1Error.invalidPEMDocument(reason: "unexpected key encoding")
        }
    }

    /// The leaf's certificate parsed; `nil` when the bytes are not DER X.509.
    static func certificate(_ der: [UInt8]) -> Certificate? {
        try? Certificate(derEncoded: der)
    }
}
