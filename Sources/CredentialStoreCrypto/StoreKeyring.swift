package import CredentialStoreCore

/// The working keys of an unlocked store, all derived from its random root key: one subkey per
/// job (``Subkey``).
///
/// Fields are encrypted with XChaCha20-Poly1305 under the ``Subkey/fieldEncryption`` subkey;
/// lookups go through keyed BLAKE2b ``BlindIndex``es under ``Subkey/blindIndex``, so the
/// database can be searched without holding any plaintext.
package struct StoreKeyring: Sendable {
    /// crypto_kdf context: exactly 8 bytes, fixed for the life of the format.
    private static let context = "credstor"

    /// The subkeys derived from the root key, by their crypto_kdf id, fixed for the life of the
    /// format. A subkey does one job, so a value made under one can never pass for another's.
    package enum Subkey: UInt64, CaseIterable {
        /// Encrypts and authenticates every field (`StoreKeyring.encrypt(_:ad:)`).
        case fieldEncryption = 1
        /// Keys the blind indexes (``StoreKeyring/blindIndex(_:_:)``).
        case blindIndex = 2
        /// Keys the table seal, the MAC over every sealed table (``TableSealing``).
        case tableSeal = 3
    }

    private let field: SecureBytes
    private let index: SecureBytes
    private let tableSeal: SecureBytes

    /// Blind indexes are 16 bytes: 2⁻¹²⁸ collision odds per pair is far below any store's size, and
    /// shorter keys keep the B-tree shallow.
    package static let indexBytes = 16

    package init(root: SecureBytes) throws {
        field = try Self.derive(.fieldEncryption, from: root)
        index = try Self.derive(.blindIndex, from: root)
        tableSeal = try Self.derive(.tableSeal, from: root)
    }

    private static func derive(_ subkey: Subkey, from root: SecureBytes) throws -> SecureBytes {
        try Sodium.deriveSubkey(from: root, id: subkey.rawValue, context: context)
    }

    /// Keyed BLAKE2b under the table-seal subkey.
    package func tableSealHash(_ message: [UInt8], outputBytes: Int) -> [UInt8] {
        message.withUnsafeBytes { Sodium.keyedHash($0, key: tableSeal, outputBytes: outputBytes) }
    }

    // MARK: Blind indexes

    /// Domain-separation labels, so an index of one kind can never equal an index of another.
    package enum IndexLabel: UInt8 {
        case space = 1, user = 2, origin = 3, trustedKey = 4
        /// A credential's label or one of its attributes (``tagIndex(label:)``, ``tagIndex(attribute:value:)``).
        case tag = 5
    }

    package func spaceIndex(_ space: ProtectionSpace) -> BlindIndex {
        blindIndex(.space, space.canonicalEncoding)
    }

    package func originIndex(_ space: ProtectionSpace) -> BlindIndex {
        blindIndex(.origin, space.originEncoding)
    }

    /// The user in NFC, so that two spellings Swift calls equal are one user, as they are one key
    /// of the `[String: Credential]` the store returns.
    package func userIndex(spaceIndex: BlindIndex, user: String) -> BlindIndex {
        blindIndex(.user, spaceIndex.bytes + Array(Unicode.nfc(user).utf8))
    }

    /// The tag of a credential's label: what a search by label finds it by. In NFC, as Swift
    /// compares strings, so two spellings of one label are one tag; each string length-prefixed,
    /// so a label can never encode as an attribute.
    package func tagIndex(label: String) -> BlindIndex {
        var message = ByteWriter(capacity: 16 + label.utf8.count)
        message.append("label")
        message.append(Unicode.nfc(label))
        defer { message.wipe() }
        return blindIndex(.tag, message.bytes)
    }

    /// The tag of one attribute of a credential, its name with its value.
    package func tagIndex(attribute name: String, value: String) -> BlindIndex {
        var message = ByteWriter(capacity: 24 + name.utf8.count + value.utf8.count)
        message.append("attribute")
        message.append(Unicode.nfc(name))
        message.append(Unicode.nfc(value))
        defer { message.wipe() }
        return blindIndex(.tag, message.bytes)
    }

    /// The tags a credential row carries: its label's, and each attribute's.
    package func tagIndexes(of credential: Credential) -> [BlindIndex] {
        var tags: [BlindIndex] = []
        if let label = credential.label { tags.append(tagIndex(label: label)) }
        for (name, value) in credential.attributes { tags.append(tagIndex(attribute: name, value: value)) }
        return tags
    }

    package func blindIndex(_ label: IndexLabel, _ message: [UInt8]) -> BlindIndex {
        var input = [label.rawValue]
        input.reserveCapacity(message.count + 1)
        input.append(contentsOf: message)
        return BlindIndex(input.withUnsafeBytes { Sodium.keyedHash($0, key: index, outputBytes: Self.indexBytes) })
    }

    // MARK: Field encryption

    /// Pads before sealing so a ciphertext's length tells only a coarse bucket, never the exact
    /// length of a password or user name.
    package static let paddingBlock = 32

    /// Encrypts `plaintext` (padded; the padded copy is zeroed afterwards).
    package func encrypt(_ plaintext: [UInt8], ad: [UInt8]) -> [UInt8] {
        var padded = plaintext.withUnsafeBytes { Sodium.pad($0, blockSize: Self.paddingBlock) }
        defer { Sodium.zero(&padded) }
        return padded.withUnsafeBytes { Sodium.encrypt($0, key: field, ad: ad) }
    }

    package func encrypt(_ text: String, ad: [UInt8]) -> [UInt8] {
        var bytes = Array(text.utf8)
        defer { Sodium.zero(&bytes) }
        return encrypt(bytes, ad: ad)
    }

    /// Decrypts a field; nil when it fails authentication (altered, moved to another row, or
    /// sealed under another key) or its padding is malformed.
    ///
    /// Inlinable over a non-generic core: the layers above call it on every lookup, and a generic
    /// called across modules would run unspecialized.
    @inlinable
    package func decrypt<R>(_ sealed: [UInt8], ad: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        var result: R?
        try decrypt(sealed, ad: ad, visiting: { result = try body($0) })
        return result
    }

    /// Decrypts a field and shows the plaintext to `body`; `body` is not called when the field
    /// fails authentication or its padding is malformed.
    @usableFromInline
    package func decrypt(_ sealed: [UInt8], ad: [UInt8], visiting body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        try sealed.withUnsafeBytes { raw in
            _ = try Sodium.decrypt(raw, key: field, ad: ad) { padded -> Void in
                guard let count = Sodium.unpaddedCount(padded, blockSize: Self.paddingBlock) else { return }
                try body(UnsafeRawBufferPointer(rebasing: padded[..<count]))
            }
        }
    }

    package func decryptString(_ sealed: [UInt8], ad: [UInt8]) -> String? {
        decrypt(sealed, ad: ad) { String(validating: $0, as: UTF8.self) } ?? nil
    }
}
