public import CredentialStoreCore
import CredentialStoreTLS
public import NIOSSL

extension TLSConfiguration {
    /// A client configuration that presents `identity` to a server that asks for a client
    /// certificate, and trusts servers as `trust` says, as far as a configuration alone can.
    ///
    /// A `TLSConfiguration` carries no verification callback, so what it can apply of a
    /// ``/CredentialStoreCore/ServerTrust`` depends on the pins:
    ///
    /// - Without pins, the trust's anchors are added to the system's roots, and swift-nio-ssl's own
    ///   verification (the one async-http-client uses) accepts a chain to either.
    /// - With pins, the configuration trusts no root at all, so that a client that cannot run
    ///   `addTLSClientHandlers(context:host:trust:)`
    ///   (async-http-client) refuses every server rather than connect without checking the pins.
    ///   Use it with that method, whose verification replaces swift-nio-ssl's.
    ///
    /// - Parameters:
    ///   - identity: The client certificate chain and key; `nil` to present none.
    ///   - trust: Pins and anchors for the server; `nil` for the system's roots alone.
    /// - Throws: ``/CredentialStoreCore/ClientIdentityError`` when a certificate or the key does not
    ///   load into BoringSSL, or an anchor is not a certificate.
    public static func clientConfiguration(identity: ClientIdentity?, trust: ServerTrust?) throws(ClientIdentityError) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let identity {
            do {
                configuration.certificateChain = try identity.certificateChain.map { .certificate(try NIOSSLCertificate(bytes: $0, format: .der)) }
            } catch {
                throw .malformedCertificate
            }
            do {
                configuration.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: identity.privateKey, format: .der))
            } catch {
                throw .unsupportedPrivateKey
            }
        }
        if let trust {
            if trust.pins.isEmpty {
                do {
                    let anchors = try trust.anchors.map { try NIOSSLCertificate(bytes: $0, format: .der) }
                    if !anchors.isEmpty { configuration.additionalTrustRoots = [.certificates(anchors)] }
                } catch {
                    throw .malformedCertificate
                }
            } else {
                configuration.trustRoots = .certificates([])
            }
        }
        return configuration
    }
}
