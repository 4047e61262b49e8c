import CredentialStoreCore
internal import CSodium

/// The primitives of sync bundles: streamed encryption, sealed boxes to device keys, signatures.
extension Sodium {
    // MARK: Device keys (Ed25519 for signatures; the same key converted to X25519 for sealed boxes)

    package static let signPublicKeyBytes = Int(crypto_sign_PUBLICKEYBYTES)
    package static let signatureBytes = Int(crypto_sign_BYTES)

    /// A new Ed25519 key pair: the public key, and the secret key in guarded memory.
    package static func signingKeyPair() throws -> (publicKey: [UInt8], secretKey: SecureBytes) {
        ensureInitialized()
        var publicKey = [UInt8](repeating: 0, count: signPublicKeyBytes)
        let secretKey = try SecureBytes(count: Int(crypto_sign_SECRETKEYBYTES)) { secret in
            _ = publicKey.withUnsafeMutableBytes {
                crypto_sign_keypair($0.baseAddress!.assumingMemoryBound(to: UInt8.self), secret.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return (publicKey, secretKey)
    }

    package static func sign(_ message: [UInt8], secretKey: SecureBytes) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: signatureBytes)
        signature.withUnsafeMutableBytes { out in
            message.withUnsafeBytes { m in
                secretKey.withUnsafeBytes { sk in
                    _ = crypto_sign_detached(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), nil,
                        m.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                        sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        return signature
    }

    package static func verify(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == signatureBytes, publicKey.count == signPublicKeyBytes else { return false }
        return signature.withUnsafeBytes { s in
            message.withUnsafeBytes { m in
                publicKey.withUnsafeBytes { pk in
                    crypto_sign_verify_detached(
                        s.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        m.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                        pk.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
                }
            }
        }
    }

    /// Whether `publicKey` is an Ed25519 key a bundle can be sealed to and a signature checked
    /// against: a point on the curve, of the main subgroup, not of small order (which the all-zero
    /// key and the identity are), with an X25519 form.
    package static func isUsableSigningKey(_ publicKey: [UInt8]) -> Bool {
        guard publicKey.count == signPublicKeyBytes else { return false }
        var curve = [UInt8](repeating: 0, count: Int(crypto_box_PUBLICKEYBYTES))
        return publicKey.withUnsafeBytes { pk in
            let point = pk.baseAddress!.assumingMemoryBound(to: UInt8.self)
            guard crypto_core_ed25519_is_valid_point(point) == 1 else { return false }
            return curve.withUnsafeMutableBytes { c in
                crypto_sign_ed25519_pk_to_curve25519(c.baseAddress!.assumingMemoryBound(to: UInt8.self), point) == 0
            }
        }
    }

    /// Seals `message` to the X25519 form of an Ed25519 public key (crypto_box_seal): only the
    /// holder of the matching secret key opens it, and the sender stays anonymous.
    package static func sealedBox(_ message: SecureBytes, toSigningKey publicKey: [UInt8]) -> [UInt8]? {
        var curve = [UInt8](repeating: 0, count: Int(crypto_box_PUBLICKEYBYTES))
        let converted = curve.withUnsafeMutableBytes { c in
            publicKey.withUnsafeBytes { pk in
                crypto_sign_ed25519_pk_to_curve25519(c.baseAddress!.assumingMemoryBound(to: UInt8.self), pk.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard publicKey.count == signPublicKeyBytes, converted == 0 else { return nil }
        var output = [UInt8](repeating: 0, count: message.count + Int(crypto_box_sealbytes()))
        output.withUnsafeMutableBytes { out in
            message.withUnsafeBytes { m in
                curve.withUnsafeBytes { c in
                    _ = crypto_box_seal(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        m.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                        c.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        return output
    }

    /// Opens a sealed box with this device's Ed25519 key pair; nil if it was not sealed to it.
    package static func openSealedBox(_ sealed: [UInt8], publicKey: [UInt8], secretKey: SecureBytes) throws -> SecureBytes? {
        let plainCount = sealed.count - Int(crypto_box_sealbytes())
        guard plainCount > 0 else { return nil }
        var curvePublic = [UInt8](repeating: 0, count: Int(crypto_box_PUBLICKEYBYTES))
        let curveSecret = try SecureBytes(count: Int(crypto_box_SECRETKEYBYTES)) { out in
            secretKey.withUnsafeBytes { sk in
                _ = crypto_sign_ed25519_sk_to_curve25519(out.baseAddress!.assumingMemoryBound(to: UInt8.self), sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        _ = curvePublic.withUnsafeMutableBytes { c in
            publicKey.withUnsafeBytes { pk in
                crypto_sign_ed25519_pk_to_curve25519(c.baseAddress!.assumingMemoryBound(to: UInt8.self), pk.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        var opened = true
        let plain = try SecureBytes(count: plainCount) { out in
            let status = sealed.withUnsafeBytes { s in
                curvePublic.withUnsafeBytes { cp in
                    curveSecret.withUnsafeBytes { cs in
                        crypto_box_seal_open(
                            out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            s.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(s.count),
                            cp.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            cs.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
            opened = status == 0
        }
        return opened ? plain : nil
    }

    // MARK: secretstream (XChaCha20-Poly1305, chunked, with an end-of-stream tag)

    package static let streamHeaderBytes = Int(crypto_secretstream_xchacha20poly1305_HEADERBYTES)
    package static let streamTagOverhead = Int(crypto_secretstream_xchacha20poly1305_ABYTES)

    /// Encrypts a stream of chunks under one key; the last chunk carries the FINAL tag, so a
    /// truncated stream is detected.
    package final class StreamWriter {
        private var state = crypto_secretstream_xchacha20poly1305_state()
        package let header: [UInt8]

        package init(key: SecureBytes) {
            var state = crypto_secretstream_xchacha20poly1305_state()
            var header = [UInt8](repeating: 0, count: Sodium.streamHeaderBytes)
            header.withUnsafeMutableBytes { h in
                key.withUnsafeBytes { k in
                    _ = crypto_secretstream_xchacha20poly1305_init_push(
                        &state, h.baseAddress!.assumingMemoryBound(to: UInt8.self), k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
            self.state = state
            self.header = header
        }

        package func push(_ plaintext: [UInt8], ad: [UInt8] = [], final: Bool) -> [UInt8] {
            var output = [UInt8](repeating: 0, count: plaintext.count + Sodium.streamTagOverhead)
            let tag = final ? crypto_secretstream_xchacha20poly1305_tag_final() : crypto_secretstream_xchacha20poly1305_tag_message()
            output.withUnsafeMutableBytes { out in
                plaintext.withUnsafeBytes { p in
                    ad.withUnsafeBytes { a in
                        _ = crypto_secretstream_xchacha20poly1305_push(
                            &state, out.baseAddress!.assumingMemoryBound(to: UInt8.self), nil,
                            p.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(p.count),
                            a.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(a.count), tag)
                    }
                }
            }
            return output
        }
    }

    /// Decrypts what a ``StreamWriter`` wrote, chunk by chunk, reporting the FINAL tag.
    package final class StreamReader {
        private var state = crypto_secretstream_xchacha20poly1305_state()

        package init?(key: SecureBytes, header: [UInt8]) {
            guard header.count == Sodium.streamHeaderBytes else { return nil }
            var state = crypto_secretstream_xchacha20poly1305_state()
            let status = header.withUnsafeBytes { h in
                key.withUnsafeBytes { k in
                    crypto_secretstream_xchacha20poly1305_init_pull(
                        &state, h.baseAddress!.assumingMemoryBound(to: UInt8.self), k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
            guard status == 0 else { return nil }
            self.state = state
        }

        /// The plaintext and whether this was the final chunk; nil when the chunk fails authentication.
        package func pull(_ ciphertext: ArraySlice<UInt8>, ad: [UInt8] = []) -> (plaintext: [UInt8], final: Bool)? {
            guard ciphertext.count >= Sodium.streamTagOverhead else { return nil }
            let plainCount = ciphertext.count - Sodium.streamTagOverhead
            // One spare byte, so an empty chunk still has a buffer to point at.
            var output = [UInt8](repeating: 0, count: plainCount + 1)
            var tag: UInt8 = 0
            let status = output.withUnsafeMutableBytes { out in
                ciphertext.withUnsafeBytes { c in
                    ad.withUnsafeBytes { a in
                        crypto_secretstream_xchacha20poly1305_pull(
                            &state, out.baseAddress!.assumingMemoryBound(to: UInt8.self), nil, &tag,
                            c.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(c.count),
                            a.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(a.count))
                    }
                }
            }
            guard status == 0 else { return nil }
            output.removeLast()
            return (output, tag == crypto_secretstream_xchacha20poly1305_tag_final())
        }
    }

    /// The bundle cost of Argon2id: above the local unlock's MODERATE, because a bundle file can be
    /// attacked offline at leisure (libsodium's SENSITIVE needs 1 GiB, too much for small machines).
    package static let bundlePasswordCost = PasswordHashCost(opsLimit: 4, memLimit: 512 << 20)

    /// BLAKE2b-512 with no key, for the digest a bundle's signature covers.
    package final class Digest {
        // The C state type is 64-byte aligned, which Swift cannot import: allocate it by size.
        private let state = UnsafeMutableRawPointer.allocate(byteCount: crypto_generichash_statebytes(), alignment: 64)

        package init() {
            crypto_generichash_init(OpaquePointer(state), nil, 0, 64)
        }

        deinit {
            state.deallocate()
        }

        package func update(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { b in
                _ = crypto_generichash_update(OpaquePointer(state), b.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(b.count))
            }
        }

        package func finish() -> [UInt8] {
            var output = [UInt8](repeating: 0, count: 64)
            output.withUnsafeMutableBytes { o in
                _ = crypto_generichash_final(OpaquePointer(state), o.baseAddress!.assumingMemoryBound(to: UInt8.self), 64)
            }
            return output
        }
    }

    /// BLAKE2b of `bytes` with no key, `outputBytes` long.
    package static func hash(_ bytes: [UInt8], outputBytes: Int) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: outputBytes)
        output.withUnsafeMutableBytes { o in
            bytes.withUnsafeBytes { b in
                _ = crypto_generichash(o.baseAddress!.assumingMemoryBound(to: UInt8.self), outputBytes,
                                       b.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(b.count), nil, 0)
            }
        }
        return output
    }
}
