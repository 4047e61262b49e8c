public import CredentialStore
import CredentialStoreTLS
public import NIOSSL

extension TLSKeychain {
    /// A client `TLSConfiguration` for `host` at `port` from this store: the identity it keeps for
    /// them (``/CredentialStore/TLSKeychain/identity(forHost:port:)``), and the anchors of their
    /// server trust.
    ///
    /// For async-http-client, which takes a configuration and nothing else:
    ///
    /// ```swift
    /// let tls = try storage.tls.clientConfiguration(forHost: "api.example.com", port: 443)
    /// let client = HTTPClient(eventLoopGroupProvider: .singleton,
    ///                         configuration: .init(tlsConfiguration: tls))
    /// ```
    ///
    /// Where pins are stored for the server, a configuration cannot apply them; it then trusts no
    /// root, so a client that only takes a configuration fails rather than skip the pins. A NIO
    /// client applies them: it gives `addTLSClientHandlers(context:host:trust:)` the trust of
    /// ``/CredentialStore/TLSKeychain/serverTrust(forHost:port:)`` (or `ServerTrust()`, the
    /// system's roots alone, when none is stored).
    ///
    /// - Throws: the store's errors; ``/CredentialStoreCore/ClientIdentityError`` for a stored
    ///   identity BoringSSL cannot load.
    public func clientConfiguration(forHost host: String, port: Int) throws -> TLSConfiguration {
        try TLSConfiguration.clientConfiguration(identity: identity(forHost: host, port: port), trust: serverTrust(forHost: host, port: port))
    }
}
