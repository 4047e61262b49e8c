/// The working keys of an unlocked store, all derived from its random root key.
///
/// Fields are sealed with XChaCha20-Poly1305 under ``field``; lookups go through keyed BLAKE2b
/// blind indexes under ``index``, so the database can be searched without holding any plaintext.
struct StoreKeyring: Sendable {
    /// crypto_kdf context: exactly 8 bytes, fixed for the life of the format.
    private static let context = "credstor"

    private let field: SecureBytes
    private let index: SecureBytes
    /// Keys the table seal (see ``TableSealing``).
    private let tableSeal: SecureBytes

    /// Blind indexes are 16 bytes: 2⁻¹²⁸ collision odds per pair is far below any store's size, and
    /// shorter keys keep the B-tree shallow.
    static let indexBytes = 16

    init(root: SecureBytes) throws {
        field = try Sodium.deriveSubkey(from: root, id: 1, context: Self.context)
        index = try Sodium.deriveSubkey(from: root, id: 2, context: Self.context)
        tableSeal = try Sodium.deriveSubkey(from: root, id: 3, context: Self.context)
    }

    /// Keyed BLAKE2b under the table-seal subkey.
    func tableSealHash(_ message: [UInt8], outputBytes: Int) -> [UInt8] {
        message.withUnsafeBytes { Sodium.keyedHash($0, key: tableSeal, outputBytes: outputBytes) }
    }

    // MARK: Blind indexes

    /// Domain-separation labels, so an index of one kind can never equal an index of another.
    enum IndexLabel: UInt8 {
        case space = 1, user = 2, origin = 3, trustedKey = 4
    }

    func spaceIndex(_ space: ProtectionSpace) -> [UInt8] {
        blindIndex(.space, space.canonicalEncoding)
    }

    func originIndex(_ space: ProtectionSpace) -> [UInt8] {
        blindIndex(.origin, space.originEncoding)
    }

    /// The user in NFC, so that two spellings Swift calls equal are one user, as they are one key
    /// of the `[String: Credential]` the store returns.
    func userIndex(spaceIndex: [UInt8], user: String) -> [UInt8] {
        blindIndex(.user, spaceIndex + Array(Unicode.nfc(user).utf8))
    }

    func blindIndex(_ label: IndexLabel, _ message: [UInt8]) -> [UInt8] {
        var input = [label.rawValue]
        input.reserveCapacity(message.count + 1)
        input.append(contentsOf: message)
        return input.withUnsafeBytes { Sodium.keyedHash($0, key: index, outputBytes: Self.indexBytes) }
    }

    // MARK: Sealed fields

    /// Pads before sealing so a ciphertext's length tells only a coarse bucket, never the exact
    /// length of a password or user name.
    static let paddingBlock = 32

    /// Seals `plaintext` (padded; the padded copy is zeroed afterwards).
    func encrypt(_ plaintext: [UInt8], ad: [UInt8]) -> [UInt8] {
        var padded = plaintext.withUnsafeBytes { Sodium.pad($0, blockSize: Self.paddingBlock) }
        defer { Sodium.zero(&padded) }
        return padded.withUnsafeBytes { Sodium.encrypt($0, key: field, ad: ad) }
    }

    func encrypt(_ text: String, ad: [UInt8]) -> [UInt8] {
        var bytes = Array(text.utf8)
        defer { Sodium.zero(&bytes) }
        return encrypt(bytes, ad: ad)
    }

    /// Opens a sealed field; nil when it fails authentication (altered, moved to another row, or
    /// sealed under another key) or its padding is malformed.
    func decrypt<R>(_ sealed: [UInt8], ad: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        try sealed.withUnsafeBytes { raw in
            try Sodium.decrypt(raw, key: field, ad: ad) { padded -> R? in
                guard let count = Sodium.unpaddedCount(padded, blockSize: Self.paddingBlock) else { return nil }
                return try body(UnsafeRawBufferPointer(rebasing: padded[..<count]))
            } ?? nil
        }
    }

    func decryptString(_ sealed: [UInt8], ad: [UInt8]) -> String? {
        decrypt(sealed, ad: ad) { String(validating: $0, as: UTF8.self) } ?? nil
    }
}
