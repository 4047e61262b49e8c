import SwiftASN1

/// The outer structure of a PKCS #12 bundle (RFC 7292), read without the password: enough to see
/// whether it holds a private key.
enum PKCS12Structure {
    private static let data: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 1]
    private static let keyBag: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 10, 1, 1]
    private static let shroudedKeyBag: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 10, 1, 2]
    private static let certificateBag: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 10, 1, 3]

    /// What the bundle shows without its password.
    struct Survey: Equatable {
        /// Key bags (plain or shrouded) outside encrypted contents.
        var keyBags = 0
        /// Certificate bags outside encrypted contents.
        var certificateBags = 0
        /// Contents that are not plain `data` (`encryptedData`): where openssl puts the certificates.
        var otherContents = 0
    }

    /// What the bundle shows outside its encrypted contents; `nil` when the bytes are not PKCS #12.
    ///
    /// Every tool we know of (openssl, browsers, keychains, keytool) puts the key, itself
    /// encrypted, in a shrouded key bag in a plain `data` content; a key hidden inside an
    /// `encryptedData` content is not seen, and such a bundle reads as one without a key.
    static func survey(_ bytes: [UInt8]) -> Survey? {
        // PFX ::= SEQUENCE { version INTEGER, authSafe ContentInfo, macData OPTIONAL }
        guard let pfx = try? BER.parse(bytes), let pfxFields = children(pfx), pfxFields.count >= 2,
              let authenticatedSafe = dataContent(pfxFields[1]).flatMap({ try? BER.parse($0) }),
              let contentInfos = children(authenticatedSafe)
        else { return nil }
        var survey = Survey()
        for contentInfo in contentInfos {
            // SafeContents ::= SEQUENCE OF SafeBag; SafeBag ::= SEQUENCE { bagId, [0] bagValue, … }
            guard let safeContents = dataContent(contentInfo) else {
                survey.otherContents += 1
                continue
            }
            guard let bags = (try? BER.parse(safeContents)).flatMap(children) else { return nil }
            for bag in bags {
                guard let bagFields = children(bag), let first = bagFields.first,
                      let bagID = try? ASN1ObjectIdentifier(berEncoded: first)
                else { return nil }
                if bagID == keyBag || bagID == shroudedKeyBag { survey.keyBags += 1 }
                if bagID == certificateBag { survey.certificateBags += 1 }
            }
        }
        return survey
    }

    /// The octets of a ContentInfo of type `data` (`SEQUENCE { OID, [0] EXPLICIT OCTET STRING }`);
    /// `nil` for another type (`encryptedData`) or a malformed one.
    private static func dataContent(_ contentInfo: ASN1Node) -> [UInt8]? {
        guard let fields = children(contentInfo), fields.count == 2,
              let type = try? ASN1ObjectIdentifier(berEncoded: fields[0]), type == data,
              let explicit = children(fields[1]), let octets = explicit.first
        else { return nil }
        return octetString(octets)
    }

    /// An OCTET STRING's bytes, joined from its pieces when BER wrote it constructed.
    private static func octetString(_ node: ASN1Node) -> [UInt8]? {
        switch node.content {
        case .primitive(let bytes): return Array(bytes)
        case .constructed(let pieces):
            var joined: [UInt8] = []
            for piece in pieces {
                guard let bytes = octetString(piece) else { return nil }
                joined += bytes
            }
            return joined
        }
    }

    private static func children(_ node: ASN1Node) -> [ASN1Node]? {
        guard case .constructed(let nodes) = node.content else { return nil }
        return Array(nodes)
    }
}
