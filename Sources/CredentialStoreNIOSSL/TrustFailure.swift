import CredentialStoreTLS
import Synchronization

/// The reason the verification callback refused a chain, kept for the handler after the TLS
/// handler: the callback's promise can only say "failed".
final class TrustFailure: Sendable {
    private let reason = Mutex<ServerTrustError?>(nil)

    func record(_ error: ServerTrustError) { reason.withLock { $0 = error } }

    var recorded: ServerTrustError? { reason.withLock { $0 } }
}
