public import CredentialStore
import CredentialStoreTLS
public import NIOSSL

extension CredentialStorage {
    /// A client `TLSConfiguration` for `host` at `port` from this store: the identity it keeps for
    /// them (`identity(forHost:port:)` of the store), and the anchors of their server trust.
    ///
    /// For async-http-client, which takes a configuration and nothing else:
    ///
    /// ```swift
    /// let tls = try storage.tlsClientConfiguration(host: "api.example.com", port: 443)
    /// let client = HTTPClient(eventLoopGroupProvider: .singleton,
    ///                         configuration: .init(tlsConfiguration: tls))
    /// ```
    ///
    /// Where pins are stored for the server, a configuration cannot apply them; it then trusts no
    /// root, so a client that only takes a configuration fails rather than skip the pins. A NIO
    /// client applies them with ``tlsServerTrust(host:port:)`` and `addTLSClientHandlers(context:host:trust:)`.
    ///
    /// - Throws: the store's errors; ``/CredentialStoreCore/ClientIdentityError`` for a stored
    ///   identity BoringSSL cannot load.
    public func tlsClientConfiguration(host: String, port: Int) throws -> TLSConfiguration {
        try TLSConfiguration.clientConfiguration(identity: identity(forHost: host, port: port), trust: serverTrust(forHost: host, port: port))
    }

    /// The server trust to give ``NIOCore/ChannelPipeline/SynchronousOperations/addTLSClientHandlers(context:host:trust:)``
    /// for `host` at `port`: the stored pins and anchors, or the system's roots alone when nothing
    /// is stored.
    public func tlsServerTrust(host: String, port: Int) throws -> ServerTrust {
        try serverTrust(forHost: host, port: port) ?? ServerTrust()
    }
}
