/// What a server must present, beyond a name it is valid for: the public keys it may use (pins)
/// and the certificates besides the system's roots that may anchor its chain.
///
/// The store keeps it in a protection space whose method is ``AuthenticationMethod/serverTrust``.
/// With pins, a chain is accepted only if one of its certificates carries a pinned key; keep a
/// backup pin, of a key not yet in use, so that rotating the server's key does not lock you out.
public struct ServerTrust: Hashable, Sendable {
    /// The pinned public keys; empty when only the chain's validity is checked.
    public var pins: Set<PublicKeyPin>
    /// Extra trust anchors, in DER: a private CA, or a self-signed server certificate.
    public var anchors: [[UInt8]]

    /// Creates a trust decision from pins and extra anchors.
    public init(pins: Set<PublicKeyPin> = [], anchors: [[UInt8]] = []) {
        self.pins = pins
        self.anchors = anchors
    }
}
