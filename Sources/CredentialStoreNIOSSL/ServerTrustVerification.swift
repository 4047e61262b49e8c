public import CredentialStoreCore
import CredentialStoreTLS
public import NIOCore
public import NIOSSL

extension ChannelPipeline.SynchronousOperations {
    /// Adds TLS for a client connection to `host`, with the server's chain decided by
    /// `ServerTrust.evaluate(chain:host:)` instead of BoringSSL's
    /// verification: the system's roots and the trust's anchors, the name, and the pins.
    ///
    /// When the trust refuses the server, the handshake fails and the handlers after these see,
    /// in `errorCaught`, the ``/CredentialStoreTLS/ServerTrustError`` that says why, not
    /// swift-nio-ssl's generic handshake error.
    ///
    /// - Parameters:
    ///   - context: The TLS context, from
    ///     `TLSConfiguration.clientConfiguration(identity:trust:)` for a client identity;
    ///     its `certificateVerification` must stay `.fullVerification` (with `.none`, swift-nio-ssl
    ///     skips the verification callback, and so the trust).
    ///   - host: The name or IP address connected to; a name is also sent as SNI.
    ///   - trust: The pins and anchors; the default checks the chain against the system's roots.
    public func addTLSClientHandlers(context: NIOSSLContext, host: String, trust: ServerTrust = ServerTrust()) throws {
        let failure = TrustFailure()
        let handler = try NIOSSLClientHandler(
            context: context, serverHostname: Self.serverNameIndication(for: host),
            customVerificationCallbackWithMetadata: { certificates, promise in
                let chain: [[UInt8]]
                do {
                    chain = try certificates.map { try $0.toDERBytes() }
                } catch {
                    failure.record(.malformedCertificate(index: 0))
                    promise.succeed(.failed)
                    return
                }
                // The evaluation is asynchronous (the system's roots load in the background); the
                // callback may leave the event loop and complete the promise later.
                Task {
                    do throws(ServerTrustError) {
                        let verified = try await trust.evaluate(chain: chain, host: host)
                        let metadata = verified.compactMap { try? NIOSSLCertificate(bytes: $0, format: .der) }
                        promise.succeed(.certificateVerified(VerificationMetadata(ValidatedCertificateChain(metadata))))
                    } catch {
                        failure.record(error)
                        promise.succeed(.failed)
                    }
                }
            })
        try addHandler(handler)
        try addHandler(ServerTrustFailureHandler(failure: failure))
    }

    /// The name to send as SNI: none for an IP address, which swift-nio-ssl refuses there (RFC 6066).
    private static func serverNameIndication(for host: String) -> String? {
        var bare = host
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = String(bare.dropFirst().dropLast()) }
        return (try? SocketAddress(ipAddress: bare, port: 0)) == nil ? host : nil
    }
}
