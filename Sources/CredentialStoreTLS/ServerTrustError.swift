/// Why a server's certificate chain was refused.
///
/// The cases name what failed; only ``untrustedChain(reason:)`` passes on swift-certificates'
/// words, which may describe the server's certificates.
public enum ServerTrustError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The server presented no certificate.
    case emptyChain
    /// The certificate at this position of the presented chain (0 is the leaf) is not DER X.509.
    case malformedCertificate(index: Int)
    /// No chain from the leaf reaches a trust anchor (the system's roots or the trust's anchors)
    /// under RFC 5280: an unknown issuer, a bad signature, an expired or not yet valid
    /// certificate. `reason` is swift-certificates' account of the first candidate chain's failure,
    /// which may quote the server's certificates (public data, but a subject all the same).
    case untrustedChain(reason: String)
    /// The leaf is not valid for the host that was asked for (RFC 6125: no matching DNS name or IP
    /// address among its subject alternative names).
    case nameMismatch(host: String)
    /// The chain is valid, but none of its certificates carries a pinned key.
    case noPinnedKey

    /// What went wrong, without certificate contents.
    public var description: String {
        switch self {
        case .emptyChain: "the server presented no certificate"
        case .malformedCertificate(let index): "certificate \(index) of the server's chain is not valid DER X.509"
        case .untrustedChain(let reason): "the server's chain does not lead to a trusted root: \(reason)"
        case .nameMismatch(let host): "the server's certificate is not valid for \(host)"
        case .noPinnedKey: "no certificate of the server's chain carries a pinned public key"
        }
    }
}
