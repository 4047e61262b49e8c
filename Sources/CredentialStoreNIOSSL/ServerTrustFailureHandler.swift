import NIOCore
import NIOSSL

/// Puts the typed reason in place of swift-nio-ssl's handshake error when the trust refused the
/// server.
final class ServerTrustFailureHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let failure: TrustFailure

    init(failure: TrustFailure) { self.failure = failure }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOSSLError, let reason = failure.recorded {
            context.fireErrorCaught(reason)
        } else {
            context.fireErrorCaught(error)
        }
    }
}
