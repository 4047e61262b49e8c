import ArgumentParser
import CredentialStore
import Foundation

/// A server's trust as `pin list --json` prints it.
enum PinJSON {
    static func object(_ endpoint: TLSEndpoint, _ trust: ServerTrust, _ persistence: Persistence, _ tls: any TLSToolkit) -> JSONValue {
        .object([
            ("host", .string(endpoint.host)),
            ("port", endpoint.port.map { .number($0) } ?? .null),
            ("pins", .array(trust.pins.sorted().map { .string($0.description) })),
            ("anchors", .array(trust.anchors.map { .string(tls.summary(of: $0)?.subject) })),
            ("persistence", .string(persistence.rawValue)),
        ])
    }
}
