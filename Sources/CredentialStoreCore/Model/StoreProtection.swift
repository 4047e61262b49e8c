/// How a store is unlocked.
public enum StoreProtection: String, Hashable, Sendable, Codable {
    /// By a key file.
    case keyFile
    /// By a passphrase.
    case passphrase
}
