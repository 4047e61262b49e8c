public import CredentialStoreCore
import Foundation
import SwiftASN1
import X509
#if canImport(Glibc)
import Glibc
#endif

extension ServerTrust {
    /// Decides whether a server that presented `chain` for `host` is to be trusted.
    ///
    /// The chain must verify under RFC 5280 (swift-certificates' `Verifier`) to one of the
    /// system's roots (`/etc/ssl/certs`) or one of ``/CredentialStoreCore/ServerTrust/anchors``,
    /// the leaf must be valid for `host` (RFC 6125), and, when there are
    /// ``/CredentialStoreCore/ServerTrust/pins``, one certificate of the verified chain, the
    /// anchor included, must carry a pinned key (each digest compared in constant time).
    ///
    /// A presented leaf that is itself one of the anchors, byte for byte (a self-signed server
    /// certificate, seldom marked as a CA), is trusted as it is, within its validity period and for
    /// the names it carries.
    ///
    /// - Parameters:
    ///   - chain: The certificates the server presented, in DER, leaf first.
    ///   - host: The name or IP address the client connected to (an IPv6 address with or without
    ///     brackets).
    /// - Returns: The verified chain in DER, from the leaf to the anchor.
    /// - Throws: ``ServerTrustError``.
    @discardableResult
    public func evaluate(chain: [[UInt8]], host: String) async throws(ServerTrustError) -> [[UInt8]] {
        guard !chain.isEmpty else { throw .emptyChain }
        var presented: [Certificate] = []
        for (index, der) in chain.enumerated() {
            guard let certificate = DERCertificate.certificate(der) else { throw .malformedCertificate(index: index) }
            presented.append(certificate)
        }
        let extraAnchors = anchors.compactMap(DERCertificate.certificate)
        guard extraAnchors.count == anchors.count else {
            throw .untrustedChain(reason: "a stored trust anchor is not valid DER X.509")
        }
        let identity = Self.serverIdentityPolicy(host: host)
        let verified: [Certificate]
        if anchors.contains(chain[0]) {
            // The very certificate stored as an anchor (a self-signed server's, which is seldom
            // marked as a CA and so is no CA to RFC 5280): trusted as it is, within its validity
            // and for its names.
            let now = Date()
            guard presented[0].notValidBefore <= now, now <= presented[0].notValidAfter else {
                throw .untrustedChain(reason: "the anchored certificate is outside its validity period")
            }
            guard await Self.leaf(presented[0], meets: identity) else { throw .nameMismatch(host: host) }
            verified = [presented[0]]
        } else {
            var verifier = Verifier(rootCertificates: CertificateStore.systemTrustRoots.appending(contentsOf: extraAnchors)) {
                RFC5280Policy()
                identity
            }
            switch await verifier.validate(leaf: presented[0], intermediates: CertificateStore(presented.dropFirst())) {
            case .validCertificate(let validated):
                verified = Array(validated)
            case .couldNotValidate(let failures):
                guard await Self.leaf(presented[0], meets: identity) else { throw .nameMismatch(host: host) }
                throw .untrustedChain(reason: failures.first.map { "\($0.policyFailureReason)" } ?? "no issuer among the trust anchors")
            }
        }
        var verifiedDER: [[UInt8]] = []
        for certificate in verified {
            var serializer = DER.Serializer()
            guard (try? serializer.serialize(certificate)) != nil else { throw .malformedCertificate(index: verifiedDER.count) }
            verifiedDER.append(serializer.serializedBytes)
        }
        if !pins.isEmpty {
            // Every digest against every pin, without stopping at the first match, so that the
            // time taken does not tell which certificate or pin matched.
            var found = false
            for der in verifiedDER {
                guard let digest = PublicKeyPin(certificate: der)?.digest else { continue }
                for pin in pins { found = pin.matches(digest) || found }
            }
            guard found else { throw .noPinnedKey }
        }
        return verifiedDER
    }

    /// Whether the leaf is valid for the host `identity` names, and nothing else checked.
    private static func leaf(_ leaf: Certificate, meets identity: ServerIdentityPolicy) async -> Bool {
        // A leaf that is its own root is checked against the policy alone.
        var nameOnly = Verifier(rootCertificates: CertificateStore([leaf])) { NameOnlyPolicy(identity: identity, leaf: leaf) }
        if case .validCertificate = await nameOnly.validate(leaf: leaf, intermediates: CertificateStore()) { return true }
        return false
    }

    /// The identity policy for `host`: an IP address is matched against IP subject alternative
    /// names, anything else against DNS names, never both (a DNS name "127.0.0.1" is no address).
    private static func serverIdentityPolicy(host: String) -> ServerIdentityPolicy {
        var bare = host
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = String(bare.dropFirst().dropLast()) }
        if isIPAddress(bare) { return ServerIdentityPolicy(serverHostname: nil, serverIP: bare) }
        return ServerIdentityPolicy(serverHostname: host, serverIP: nil)
    }

    private static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }
}

/// The server identity policy alone, for telling a wrong name from an untrusted chain.
///
/// It claims the leaf's critical extensions as handled, because the verifier refuses a leaf with
/// a critical extension no policy claims before any policy runs (every CA-issued leaf has
/// critical basic constraints or key usage); whether those hold is the full verification's
/// business, which has already run.
private struct NameOnlyPolicy: VerifierPolicy {
    var identity: ServerIdentityPolicy
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier]

    init(identity: ServerIdentityPolicy, leaf: Certificate) {
        self.identity = identity
        verifyingCriticalExtensions = leaf.extensions.filter(\.critical).map(\.oid)
    }

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        identity.chainMeetsPolicyRequirements(chain: chain)
    }
}
