import ArgumentParser
import CredentialStore
import Foundation

/// An identity as `identity list --json` and `import --json` print it: never its key.
enum IdentityJSON {
    static func object(_ endpoint: TLSEndpoint, _ identity: ClientIdentity, _ persistence: Persistence, _ tls: any TLSToolkit) -> JSONValue {
        let summary = leafSummary(of: identity, tls)
        return .object([
            ("host", .string(endpoint.host)),
            ("port", endpoint.port.map { .number($0) } ?? .null),
            ("subject", .string(summary?.subject)),
            ("issuer", .string(summary?.issuer)),
            ("notBefore", .string(summary.map { Describe.timestamp($0.notBefore) })),
            ("notAfter", .string(summary.map { Describe.timestamp($0.notAfter) })),
            ("expired", .bool(summary.map { $0.notAfter <= Date() } ?? false)),
            ("publicKeyPin", .string(summary?.publicKeyPin.description)),
            ("certificates", .number(identity.certificateChain.count)),
            ("persistence", .string(persistence.rawValue)),
        ])
    }

    /// The summary of the identity's own certificate, the leaf; nil for an identity without a
    /// readable one.
    static func leafSummary(of identity: ClientIdentity, _ tls: any TLSToolkit) -> CertificateSummary? {
        identity.certificateChain.first.flatMap(tls.summary(of:))
    }
}
