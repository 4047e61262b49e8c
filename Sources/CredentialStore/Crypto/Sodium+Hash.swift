internal import CSodium

/// Plain (unkeyed) hashes, for protocols that name them: HTTP Digest's SHA-256 (RFC 7616).
extension Sodium {
    /// The 32-byte SHA-256 digest of `message`.
    static func sha256(_ message: [UInt8]) -> [UInt8] {
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
