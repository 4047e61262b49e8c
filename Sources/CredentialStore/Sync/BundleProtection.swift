/// How an export bundle is protected.
public enum BundleProtection: Sendable, CustomStringConvertible {
    /// A passphrase, stretched with Argon2id (4 passes, 512 MiB: more than the local unlock, since
    /// a bundle can be attacked offline).
    case passphrase(String)
    /// The device keys of the stores that may open it (`DeviceKey("csdev1:…")` reads one from its
    /// text). The bundle is signed with this store's device key.
    case recipients([DeviceKey])

    /// `passphrase <redacted>` or the recipients' public keys: never the passphrase.
    public var description: String {
        switch self {
        case .passphrase: "passphrase <redacted>"
        case .recipients(let keys): "recipients \(keys.map(\.description))"
        }
    }
}
