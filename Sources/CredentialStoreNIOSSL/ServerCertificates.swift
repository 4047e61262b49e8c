public import NIOCore
import NIOPosix
import NIOSSL

/// The certificates a server presents, fetched without trusting them: what `credstore pin add
/// --from-server` shows a person to confirm before pinning (trust on first use, made explicit).
public enum ServerCertificates {
    /// Connects to `host` at `port`, takes the chain the server presents in the TLS handshake and
    /// hangs up; nothing is sent, and nothing of the chain is checked.
    ///
    /// - Returns: The certificates in DER, the server's own first.
    /// - Throws: NIO's connection errors, or swift-nio-ssl's `NIOSSLError` when the handshake fails before
    ///   the server's certificates arrive.
    public static func fetch(host: String, port: Int, timeout: TimeAmount = .seconds(10)) throws -> [[UInt8]] {
        var configuration = TLSConfiguration.makeClientConfiguration()
        // The callback below sees the chain whatever it is, and then ends the handshake.
        configuration.certificateVerification = .noHostnameVerification
        let context = try NIOSSLContext(configuration: configuration)
        let group = MultiThreadedEventLoopGroup.singleton
        let presented = group.next().makePromise(of: [[UInt8]].self)
        let serverName = (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = try NIOSSLClientHandler(context: context, serverHostname: serverName, customVerificationCallback: { certificates, verification in
                        presented.completeWith(Result { try certificates.map { try $0.toDERBytes() } })
                        // Refused on purpose: the connection is for looking, not for talking.
                        verification.succeed(.failed)
                    })
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
        let channel: any Channel
        do {
            channel = try bootstrap.connect(host: host, port: port).wait()
        } catch {
            // Every promise is completed: NIO traps on one dropped unfulfilled.
            presented.fail(error)
            throw error
        }
        channel.closeFuture.whenComplete { _ in
            presented.fail(NIOSSLError.handshakeFailed(.sslError([])))
        }
        group.next().scheduleTask(in: timeout) { presented.fail(ChannelError.connectTimeout(timeout)) }
        defer { channel.close(promise: nil) }
        return try presented.futureResult.wait()
    }
}
