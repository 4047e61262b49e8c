import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import Foundation

/// The public key of a store's sync device: what one machine trusts, and seals its bundles to,
/// when it syncs with another.
///
/// Its text form, ``description``, is `csdev1:` and the Ed25519 key in base64url without padding,
/// as ``SyncDevice/deviceKey`` returns it and `credstore device show` prints it. People copy
/// that text between machines; ``init(_:)`` reads it back and refuses anything else, so a value of
/// this type is always a well-formed key.
///
/// ```swift
/// let laptop = try DeviceKey(textCopiedFromTheLaptop)   // "csdev1:…"
/// try storage.sync.trust(laptop)
/// ```
public struct DeviceKey: Hashable, Sendable, Codable, CustomStringConvertible {
    /// What every device key's text form begins with; the digit is the version of the format.
    public static let textPrefix = "csdev1:"

    /// The Ed25519 public key, ``Sodium/signPublicKeyBytes`` long.
    let bytes: [UInt8]

    /// A key the library made or read from its own sealed rows, whose length is known.
    init(bytes: [UInt8]) {
        precondition(bytes.count == Sodium.signPublicKeyBytes, "a device key is an Ed25519 public key")
        self.bytes = bytes
    }

    /// A key the library read from a file someone else wrote: nil unless it has the length of one.
    init?(checking bytes: [UInt8]) {
        guard bytes.count == Sodium.signPublicKeyBytes else { return nil }
        self.bytes = bytes
    }

    /// Reads a device key from its text form; whitespace around it (a copied line break) is ignored.
    ///
    /// - Throws: ``/CredentialStoreCore/CredentialStorageError/Code/invalidInput`` when the text is not a device key.
    public init(_ text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix(Self.textPrefix) else {
            throw CredentialStorageError(.invalidInput, "a device key starts with \(Self.textPrefix); copy it as the other store shows it")
        }
        var base64 = String(trimmed.dropFirst(Self.textPrefix.count))
            .replacingEvery("-", with: "+").replacingEvery("_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let key = DeviceKey(checking: [UInt8](data)) else {
            throw CredentialStorageError(.invalidInput, "the device key is damaged; copy it again")
        }
        // The right length is not enough: a key no bundle can be sealed to (all zeros, a point of
        // small order) would make every later export fail.
        guard Sodium.isUsableSigningKey(key.bytes) else {
            throw CredentialStorageError(.invalidInput, "that is not a device key any store has (not a usable Ed25519 key); copy it again")
        }
        self = key
    }

    /// The text form: `csdev1:` and the key in base64url without padding.
    public var description: String {
        Self.textPrefix + Data(bytes).base64EncodedString()
            .replacingEvery("+", with: "-").replacingEvery("/", with: "_")
            .replacingEvery("=", with: "")
    }

    /// Decodes the text form, refusing what ``init(_:)`` refuses.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            try self.init(text)
        } catch let error as CredentialStorageError {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.message)
        }
    }

    /// Encodes the text form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
