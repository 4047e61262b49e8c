import CredentialStoreCore
import Foundation

/// How an identity or a trust is written into a credential: one line of text in the password,
/// which is sealed with the rest, so no key byte, certificate subject or pin is ever in the clear.
///
/// `identity/1 key=BASE64 chain=BASE64,BASE64…` and `trust/1 pins=BASE64,… anchors=BASE64,…`:
/// versioned, so that a later form can be read beside this one.
enum TLSItemCoding {
    static let identityUser = "identity"
    static let trustUser = "trust"

    static func credential(_ identity: ClientIdentity, persistence: Persistence?) throws -> Credential {
        guard !identity.certificateChain.isEmpty, !identity.certificateChain.contains(where: \.isEmpty), !identity.privateKey.isEmpty else {
            throw CredentialStorageError(.invalidInput, "a client identity needs its certificate and its private key")
        }
        let text = "identity/1 key=\(base64(identity.privateKey)) chain=\(identity.certificateChain.map(base64).joined(separator: ","))"
        var credential = Credential(user: identityUser, password: text, expires: identity.expires)
        if let persistence { credential.persistence = persistence }
        return credential
    }

    static func credential(_ trust: ServerTrust, persistence: Persistence?) throws -> Credential {
        guard !trust.pins.isEmpty || !trust.anchors.isEmpty, !trust.anchors.contains(where: \.isEmpty) else {
            throw CredentialStorageError(.invalidInput, "a server trust needs a pin or an anchor certificate")
        }
        let pins = trust.pins.sorted().map { base64($0.digest) }.joined(separator: ",")
        let text = "trust/1 pins=\(pins) anchors=\(trust.anchors.map(base64).joined(separator: ","))"
        var credential = Credential(user: trustUser, password: text)
        if let persistence { credential.persistence = persistence }
        return credential
    }

    static func identity(_ credential: Credential) throws -> ClientIdentity {
        let fields = try parse(credential.password, kind: "identity/1", names: ["key", "chain"])
        guard let key = fields["key"]?.first, let chain = fields["chain"], !chain.isEmpty else { throw damaged }
        return ClientIdentity(certificateChain: chain, privateKey: key, expires: credential.expires)
    }

    static func trust(_ credential: Credential) throws -> ServerTrust {
        let fields = try parse(credential.password, kind: "trust/1", names: ["pins", "anchors"])
        var pins: Set<PublicKeyPin> = []
        for digest in fields["pins"] ?? [] {
            guard let pin = PublicKeyPin(digest: digest) else { throw damaged }
            pins.insert(pin)
        }
        return ServerTrust(pins: pins, anchors: fields["anchors"] ?? [])
    }

    /// The words of `text` after `kind`, each `name=` a comma-separated list of base64 values.
    private static func parse(_ text: String, kind: String, names: Set<String>) throws -> [String: [[UInt8]]] {
        let words = text.split(separator: " ", omittingEmptySubsequences: false)
        guard words.first.map(String.init) == kind else { throw damaged }
        var fields: [String: [[UInt8]]] = [:]
        for word in words.dropFirst() {
            guard let equals = word.firstIndex(of: "=") else { throw damaged }
            let name = String(word[..<equals])
            guard names.contains(name), fields[name] == nil else { throw damaged }
            let list = word[word.index(after: equals)...]
            fields[name] = try list.isEmpty ? [] : list.split(separator: ",", omittingEmptySubsequences: false).map {
                guard let data = Data(base64Encoded: String($0)), !data.isEmpty else { throw damaged }
                return Array(data)
            }
        }
        return fields
    }

    private static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    /// A TLS space whose credential is not one this store writes: only an edit of the store, or a
    /// credential set in a TLS space by hand, makes one.
    private static var damaged: CredentialStorageError {
        CredentialStorageError(.corrupt, "a stored TLS identity or server trust cannot be read; store it again")
    }
}
