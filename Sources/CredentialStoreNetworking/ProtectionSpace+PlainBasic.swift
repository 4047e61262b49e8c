import CredentialStore
import Logging

/// When Basic, which sends the password itself, may answer a challenge.
extension ProtectionSpace {
    /// Whether a Basic challenge for this space may be answered: where the password travels
    /// protected (``/CredentialStore/ProtectionSpace/receivesCredentialSecurely``), where the
    /// server or proxy is on this machine's loopback interface, or when the caller opted in.
    ///
    /// Loopback (127.0.0.0/8, `::1`, `localhost` and names under `.localhost`) is "potentially
    /// trustworthy" in the W3C Secure Contexts specification: what is sent there never leaves
    /// the machine, so Basic to a development server or a local proxy needs no opt-in.
    func acceptsBasic(optedIn: Bool) -> Bool {
        optedIn || receivesCredentialSecurely || Self.isLoopback(host)
    }

    /// Whether `host` names this machine's loopback interface.
    static func isLoopback(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name == "localhost" || name.hasSuffix(".localhost") || name == "::1" { return true }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets.allSatisfy({ UInt8($0) != nil && ($0 == "0" || !$0.hasPrefix("0")) }) else { return false }
        return octets[0] == "127"
    }

    /// Logs, at notice, why a Basic challenge for this space went unanswered: never the
    /// credential, only the space and the way to allow it.
    func logDeclinedBasic(_ logger: Logger) {
        logger.notice(
            "declined a Basic challenge: it would send the password readable on the wire to a host that is not loopback; answer it over https, or opt in with allowsBasicOverPlainHTTP",
            metadata: ["space": "\(self)"])
    }
}
