import CredentialStoreCore
internal import CSodium

/// The few libsodium primitives credstore uses, with Swift types in and out.
///
/// Everything that touches libsodium goes through here or ``SecureBytes``, so the C module stays
/// an implementation detail of the crypto layer.
package enum Sodium {
    private static let initialized: Bool = sodium_init() >= 0

    package static func ensureInitialized() {
        precondition(initialized, "libsodium failed to initialise")
    }

    package static let aeadKeyBytes = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)
    package static let aeadNonceBytes = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    package static let aeadTagBytes = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)

    package static func randomBytes(_ count: Int) -> [UInt8] {
        ensureInitialized()
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
        return bytes
    }

    /// XChaCha20-Poly1305 with a random nonce; returns nonce ‖ ciphertext ‖ tag.
    package static func encrypt(_ plaintext: UnsafeRawBufferPointer, key: SecureBytes, ad: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: aeadNonceBytes + plaintext.count + aeadTagBytes)
        output.withUnsafeMutableBytes { out in
            let nonce = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
            NoncePool.fill(nonce, count: aeadNonceBytes)
            key.withUnsafeBytes { k in
                ad.withUnsafeBytes { a in
                    _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                        nonce + aeadNonceBytes, nil,
                        plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                        a.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(a.count),
                        nil, nonce, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        return output
    }

    /// Decrypts what ``encrypt(_:key:ad:)`` made and hands the plaintext to `body`, zeroing it afterwards.
    /// Returns nil when the tag does not verify (wrong key, wrong associated data, or altered bytes).
    package static func decrypt<R>(
        _ sealed: UnsafeRawBufferPointer, key: SecureBytes, ad: [UInt8],
        _ body: (UnsafeRawBufferPointer) throws -> R
    ) rethrows -> R? {
        guard sealed.count >= aeadNonceBytes + aeadTagBytes else { return nil }
        let plainCount = sealed.count - aeadNonceBytes - aeadTagBytes
        return try withUnsafeTemporaryAllocation(byteCount: max(plainCount, 1), alignment: 16) { plain in
            defer { sodium_memzero(plain.baseAddress!, plain.count) }
            let base = sealed.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let status = key.withUnsafeBytes { k in
                ad.withUnsafeBytes { a in
                    crypto_aead_xchacha20poly1305_ietf_decrypt(
                        plain.baseAddress!.assumingMemoryBound(to: UInt8.self), nil, nil,
                        base + aeadNonceBytes, UInt64(sealed.count - aeadNonceBytes),
                        a.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(a.count),
                        base, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
            guard status == 0 else { return nil }
            return try body(UnsafeRawBufferPointer(rebasing: plain[..<plainCount]))
        }
    }

    /// Keyed BLAKE2b of `message`, `outputBytes` long (16…64).
    package static func keyedHash(_ message: UnsafeRawBufferPointer, key: SecureBytes, outputBytes: Int) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: outputBytes)
        output.withUnsafeMutableBytes { out in
            key.withUnsafeBytes { k in
                _ = crypto_generichash(
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self), outputBytes,
                    message.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(message.count),
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self), k.count)
            }
        }
        return output
    }

    /// Subkey `id` of `root` (crypto_kdf, BLAKE2b-based).
    package static func deriveSubkey(from root: SecureBytes, id: UInt64, context: String) throws -> SecureBytes {
        precondition(context.utf8.count == Int(crypto_kdf_CONTEXTBYTES), "kdf context must be 8 bytes")
        return try SecureBytes(count: Int(crypto_kdf_KEYBYTES)) { out in
            root.withUnsafeBytes { r in
                _ = crypto_kdf_derive_from_key(
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count, id, context,
                    r.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
    }

    /// Argon2id parameters, kept with each passphrase slot so that stores made with other
    /// strengths still open.
    package struct PasswordHashCost: Hashable, Sendable {
        package var opsLimit: UInt64
        package var memLimit: Int

        package init(opsLimit: UInt64, memLimit: Int) {
            self.opsLimit = opsLimit
            self.memLimit = memLimit
        }

        /// libsodium's MODERATE: about a second and 256 MiB, for the local unlock.
        package static let moderate = PasswordHashCost(
            opsLimit: UInt64(crypto_pwhash_OPSLIMIT_MODERATE), memLimit: Int(crypto_pwhash_MEMLIMIT_MODERATE))
        /// libsodium's SENSITIVE: for bundles, which are attacked offline.
        package static let sensitive = PasswordHashCost(
            opsLimit: UInt64(crypto_pwhash_OPSLIMIT_SENSITIVE), memLimit: Int(crypto_pwhash_MEMLIMIT_SENSITIVE))
    }

    package static let passwordSaltBytes = Int(crypto_pwhash_SALTBYTES)

    /// Argon2id13 of `passphrase` into a 32-byte key.
    package static func passwordHash(_ passphrase: String, salt: [UInt8], cost: PasswordHashCost) throws -> SecureBytes {
        var passphrase = passphrase
        return try passphrase.withUTF8 { pass in
            try SecureBytes(count: 32) { out in
                let status = salt.withUnsafeBytes { s in
                    crypto_pwhash(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(out.count),
                        UnsafeRawPointer(pass.baseAddress!).assumingMemoryBound(to: CChar.self), UInt64(pass.count),
                        s.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        cost.opsLimit, cost.memLimit, crypto_pwhash_ALG_ARGON2ID13)
                }
                guard status == 0 else {
                    throw CredentialStorageError(.io, "not enough memory to derive the key from the passphrase")
                }
            }
        }
    }

    /// Pads to a multiple of `blockSize` (ISO/IEC 7816-4, as sodium_pad does).
    package static func pad(_ bytes: UnsafeRawBufferPointer, blockSize: Int) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: bytes.count + blockSize)
        var paddedCount = 0
        buffer.withUnsafeMutableBytes { out in
            if let base = bytes.baseAddress { out.baseAddress!.copyMemory(from: base, byteCount: bytes.count) }
            _ = sodium_pad(&paddedCount, out.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count, blockSize, out.count)
        }
        buffer.removeLast(buffer.count - paddedCount)
        return buffer
    }

    /// The unpadded length of `bytes`, or nil when the padding is malformed.
    package static func unpaddedCount(_ bytes: UnsafeRawBufferPointer, blockSize: Int) -> Int? {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return nil }
        var count = 0
        let status = sodium_unpad(&count, base.assumingMemoryBound(to: UInt8.self), bytes.count, blockSize)
        return status == 0 ? count : nil
    }

    package static func zero(_ buffer: UnsafeMutableRawBufferPointer) {
        if let base = buffer.baseAddress { sodium_memzero(base, buffer.count) }
    }

    package static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in
            a.isEmpty || sodium_memcmp(x.baseAddress!, y.baseAddress!, a.count) == 0 } }
    }

    package static func zero(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { sodium_memzero(base, $0.count) } }
    }
}
