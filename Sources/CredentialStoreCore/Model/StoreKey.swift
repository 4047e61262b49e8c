public import Foundation

/// What unlocks a store.
///
/// A store keeps a random root key wrapped in a key slot. The slot is opened either by a key file
/// (32 random bytes, created beside the store on first use) or by a passphrase stretched with
/// Argon2id (libsodium's MODERATE cost: about a second and 256 MiB per unlock).
public enum StoreKey: Sendable, CustomStringConvertible {
    /// A key file; created (0600) if neither it nor the store exists yet.
    case keyFile(URL)
    /// A passphrase.
    case passphrase(String)
    /// A passphrase store unlocked in this login session (`credstore unlock`): what the unlock
    /// keeps in the kernel keyring, and nothing else. Throws
    /// ``CredentialStorageError/Code/locked`` when the store is not unlocked.
    case unlockedSession

    /// The key file's path, or `passphrase <redacted>`: never the passphrase itself.
    public var description: String {
        switch self {
        case .keyFile(let url): "key file \(url.path)"
        case .passphrase: "passphrase <redacted>"
        case .unlockedSession: "unlocked session"
        }
    }
}
