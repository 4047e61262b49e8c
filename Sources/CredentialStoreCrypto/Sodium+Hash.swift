import CredentialStoreCore
internal import CSodium

/// Plain (unkeyed) hashes, for protocols that name them: HTTP Digest's SHA-256 (RFC 7616).
extension Sodium {
    /// The 32-byte SHA-256 digest of `message`.
    package static func sha256(_ message: [UInt8]) -> [UInt8] {
        ensureInitialized()
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        digest.withUnsafeMutableBufferPointer { out in
            message.withUnsafeBufferPointer { input in
                _ = crypto_hash_sha256(out.baseAddress!, input.baseAddress, UInt64(input.count))
            }
        }
        return digest
    }
}

extension Sodium {
    /// The SHA-512/256 initial hash value (FIPS 180-4 §5.3.6.2).
    private static let sha512_256Initial: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (
        0x22312194fc2bf72c, 0x9f555fa3c84c64c2, 0x2393b86b6f53b151, 0x963877195940eabd,
        0x96283ee2a88effe3, 0xbe5e1e2553863992, 0x2b0199fc2c85b8aa, 0x0eb72ddc81c52ca2)

    /// The 32-byte SHA-512/256 digest of `message` (RFC 7616 ranks Digest's `SHA-512-256` first).
    ///
    /// SHA-512/256 is SHA-512 started from another initial value and cut to 32 bytes (FIPS 180-4
    /// §6.7). libsodium names only SHA-512, so its streaming state is started from that value:
    /// the compression function stays libsodium's.
    package static func sha512_256(_ message: [UInt8]) -> [UInt8] {
        ensureInitialized()
        var state = crypto_hash_sha512_state()
        _ = crypto_hash_sha512_init(&state)
        state.state = sha512_256Initial
        var full = [UInt8](repeating: 0, count: Int(crypto_hash_sha512_BYTES))
        message.withUnsafeBufferPointer { input in
            _ = crypto_hash_sha512_update(&state, input.baseAddress, UInt64(input.count))
        }
        full.withUnsafeMutableBufferPointer { out in
            _ = crypto_hash_sha512_final(&state, out.baseAddress!)
        }
        return Array(full.prefix(32))
    }
}

extension Sodium {
    /// BLAKE2b-256 of a sequence of fields that `body` hands over one at a time (nil for an absent
    /// one): each tagged and length-prefixed, so that no two different sequences encode alike, and
    /// hashed as it comes, without a copy.
    package static func fieldDigest(_ body: (_ add: (UnsafeBufferPointer<UInt8>?) -> Void) throws -> Void) rethrows -> [UInt8] {
        ensureInitialized()
        var output = [UInt8](repeating: 0, count: 32)
        // libsodium's state wants 64-byte alignment, which a Swift local does not promise.
        try withUnsafeTemporaryAllocation(byteCount: crypto_generichash_statebytes(), alignment: 64) { buffer in
            let state = OpaquePointer(buffer.baseAddress!)
            crypto_generichash_init(state, nil, 0, 32)
            try body { field in
                guard let field else {
                    var absent: UInt8 = 0
                    crypto_generichash_update(state, &absent, 1)
                    return
                }
                // Tag 1 and the length, big-endian, from the stack: this runs for every field of
                // the schema on every open.
                var prefix = (UInt8(1), UInt32(field.count).bigEndian)
                withUnsafeBytes(of: &prefix.1) { length in
                    crypto_generichash_update(state, &prefix.0, 1)
                    crypto_generichash_update(state, length.baseAddress!.assumingMemoryBound(to: UInt8.self), 4)
                }
                if let base = field.baseAddress { crypto_generichash_update(state, base, UInt64(field.count)) }
            }
            output.withUnsafeMutableBufferPointer { _ = crypto_generichash_final(state, $0.baseAddress!, 32) }
        }
        return output
    }
}
