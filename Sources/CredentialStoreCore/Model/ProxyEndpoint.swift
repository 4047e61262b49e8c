/// The proxy a request goes through: what a 407 challenge's protection space is made of.
///
/// The proxy's own host and port, as the request's configuration names it, and its kind. A proxy
/// space made from it (``ProtectionSpace/init(proxy:realm:authenticationMethod:)``)
/// is never equal to a server's space.
public struct ProxyEndpoint: Hashable, Sendable {
    /// The proxy's host name or address.
    public var host: String
    /// The proxy's port.
    public var port: Int
    /// The kind of proxy.
    public var type: ProxyType

    /// Names a proxy.
    ///
    /// - Parameters:
    ///   - host: The proxy's host name or address.
    ///   - port: The proxy's port.
    ///   - type: The kind of proxy.
    public init(host: String, port: Int, type: ProxyType) {
        self.host = host
        self.port = port
        self.type = type
    }
}
