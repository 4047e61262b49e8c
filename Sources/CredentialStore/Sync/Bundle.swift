/// One synchronizable item as a bundle carries it; a nil password is a deletion (tombstone).
struct BundleItem: Hashable, Sendable {
    var space: ProtectionSpace
    var user: String
    var stamp: HybridTimestamp
    var password: String?
}

/// One space's default choice as a bundle carries it; a nil user is "no default".
struct BundleDefault: Hashable, Sendable {
    var space: ProtectionSpace
    var user: String?
    var stamp: HybridTimestamp
}

/// What a bundle holds once opened and checked.
struct BundleContents: Sendable {
    var senderDevice: [UInt8]
    /// The signer's Ed25519 key, for a recipient-mode bundle (passphrase bundles are not signed).
    var signer: [UInt8]?
    var created: Int64
    var items: [BundleItem]
    var defaults: [BundleDefault]
}

/// The byte layout of a bundle; docs/sync-format.md describes it for people.
///
///     header  = "CSBUNDLE" version:u8 mode:u8 mode-fields stream-header[24]
///     passphrase mode fields = salt[16] opslimit:u64 memlimit:u64
///     recipient mode fields  = count:u16 (key-id[8] sealed-file-key[80]){count}
///     body    = (length:u32 secretstream-chunk[length])*   — the last chunk tagged FINAL, then EOF
///
/// The first chunk's associated data is the whole header, so no header byte can change unnoticed.
/// Chunks: metadata, then items in batches, then a final chunk holding the Ed25519 signature (over
/// the header and every earlier plaintext) in recipient mode, or nothing in passphrase mode.
enum BundleFormat {
    static let magic: [UInt8] = Array("CSBUNDLE".utf8)
    static let version: UInt8 = 1
    static let itemsPerChunk = 1024
    static let maximumChunkBytes = 64 << 20
    static let maximumRecipients = 4096

    enum Protection {
        case passphrase(String)
        case recipients([[UInt8]])
    }

    private enum Mode: UInt8 {
        case passphrase = 1, recipients = 2
    }

    private enum ChunkKind: UInt8 {
        case metadata = 0x4D, items = 0x49, defaults = 0x44, final = 0x46
    }

    static func keyID(_ publicKey: [UInt8]) -> [UInt8] {
        Sodium.hash(publicKey, outputBytes: 8)
    }

    // MARK: Writing

    static func write(_ contents: BundleContents, protection: Protection, signer: DeviceIdentity) throws -> [UInt8] {
        var header = ByteWriter(capacity: 256)
        header.append(raw: magic)
        header.append(version)
        let fileKey: SecureBytes
        switch protection {
        case .passphrase(let passphrase):
            guard !passphrase.isEmpty else {
                throw CredentialStorageError(.invalidInput, "the bundle passphrase is empty; set CREDSTORE_BUNDLE_PASSPHRASE")
            }
            header.append(Mode.passphrase.rawValue)
            let salt = Sodium.randomBytes(Sodium.passwordSaltBytes)
            let cost = Sodium.bundlePasswordCost
            header.append(raw: salt)
            header.append(Int64(cost.opsLimit))
            header.append(Int64(cost.memLimit))
            fileKey = try Sodium.passwordHash(passphrase, salt: salt, cost: cost)
        case .recipients(let recipients):
            guard !recipients.isEmpty, recipients.count <= maximumRecipients else {
                throw CredentialStorageError(.invalidInput, "a bundle needs between 1 and \(maximumRecipients) recipients")
            }
            header.append(Mode.recipients.rawValue)
            fileKey = try SecureBytes.random(count: 32)
            header.append(raw: [UInt8(recipients.count >> 8), UInt8(recipients.count & 0xFF)])
            for recipient in recipients {
                guard let sealed = Sodium.sealedBox(fileKey, toSigningKey: recipient) else {
                    throw CredentialStorageError(.invalidInput, "a recipient key is not a valid device key")
                }
                header.append(raw: keyID(recipient))
                header.append(raw: sealed)
            }
        }
        let stream = Sodium.StreamWriter(key: fileKey)
        header.append(raw: stream.header)
        let headerBytes = header.bytes

        var output = headerBytes
        let digest = Sodium.Digest()
        digest.update(headerBytes)
        var first = true
        func emit(_ plaintext: [UInt8], final: Bool = false) {
            if !final { digest.update(plaintext) }
            let chunk = stream.push(plaintext, ad: first ? headerBytes : [], final: final)
            first = false
            let length = UInt32(chunk.count)
            output += [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
            output += chunk
        }

        var metadata = ByteWriter()
        metadata.append(ChunkKind.metadata.rawValue)
        metadata.append(raw: contents.senderDevice)
        metadata.append(raw: contents.signer ?? [UInt8](repeating: 0, count: Sodium.signPublicKeyBytes))
        metadata.append(contents.created)
        metadata.append(Int64(contents.items.count))
        metadata.append(Int64(contents.defaults.count))
        emit(metadata.bytes)

        for batch in stride(from: 0, to: contents.items.count, by: itemsPerChunk) {
            var chunk = ByteWriter(capacity: 128 * itemsPerChunk)
            chunk.append(ChunkKind.items.rawValue)
            for item in contents.items[batch..<min(batch + itemsPerChunk, contents.items.count)] {
                chunk.append(raw: item.space.canonicalEncoding.lengthPrefixed)
                chunk.append(item.user)
                item.stamp.write(to: &chunk)
                chunk.append(optional: item.password)
            }
            var bytes = chunk.bytes
            emit(bytes)
            Sodium.zero(&bytes)
        }
        for batch in stride(from: 0, to: contents.defaults.count, by: itemsPerChunk) {
            var chunk = ByteWriter()
            chunk.append(ChunkKind.defaults.rawValue)
            for choice in contents.defaults[batch..<min(batch + itemsPerChunk, contents.defaults.count)] {
                chunk.append(raw: choice.space.canonicalEncoding.lengthPrefixed)
                chunk.append(optional: choice.user)
                choice.stamp.write(to: &chunk)
            }
            emit(chunk.bytes)
        }
        var final: [UInt8] = [ChunkKind.final.rawValue]
        if case .recipients = protection {
            final += Sodium.sign(digest.finish(), secretKey: signer.secretKey)
        }
        emit(final, final: true)
        return output
    }

    // MARK: Reading

    private static func invalid(_ why: String) -> CredentialStorageError {
        CredentialStorageError(.invalidBundle, "the bundle is not valid (\(why)); it was damaged or altered: get a fresh copy")
    }

    /// Opens and checks a bundle: header, every chunk's authentication, the final tag, nothing
    /// after it, the item counts and, in recipient mode, the signature.
    static func read(_ bytes: [UInt8], passphrase: String?, device: DeviceIdentity?) throws -> BundleContents {
        var reader = ByteReader(bytes)
        guard (try? Array(reader.readRaw(count: magic.count))) == magic else { throw invalid("not a credstore bundle") }
        let version = try reader.orInvalid { try $0.readByte() }
        guard version <= Self.version else {
            throw CredentialStorageError(.unsupportedFormatVersion, "the bundle has format \(version), newer than this credstore reads; upgrade credstore")
        }
        guard version == Self.version, let mode = Mode(rawValue: try reader.orInvalid({ try $0.readByte() })) else {
            throw invalid("unknown bundle mode")
        }
        let fileKey: SecureBytes
        switch mode {
        case .passphrase:
            let salt = Array(try reader.orInvalid { try $0.readRaw(count: Sodium.passwordSaltBytes) })
            let ops = try reader.orInvalid { try $0.readInt64() }
            let mem = try reader.orInvalid { try $0.readInt64() }
            guard (1...16).contains(ops), (8192...(4 << 30)).contains(mem) else { throw invalid("bad key-derivation parameters") }
            guard let passphrase, !passphrase.isEmpty else {
                throw CredentialStorageError(.invalidInput, "this bundle is protected by a passphrase; set CREDSTORE_BUNDLE_PASSPHRASE")
            }
            fileKey = try Sodium.passwordHash(passphrase, salt: salt, cost: .init(opsLimit: UInt64(ops), memLimit: Int(mem)))
        case .recipients:
            let countBytes = Array(try reader.orInvalid { try $0.readRaw(count: 2) })
            let count = Int(countBytes[0]) << 8 | Int(countBytes[1])
            guard count >= 1, count <= maximumRecipients else { throw invalid("bad recipient count") }
            var found: SecureBytes?
            for _ in 0..<count {
                let id = Array(try reader.orInvalid { try $0.readRaw(count: 8) })
                let sealed = Array(try reader.orInvalid { try $0.readRaw(count: 80) })
                if found == nil, let device, id == keyID(device.publicKey) {
                    found = try Sodium.openSealedBox(sealed, publicKey: device.publicKey, secretKey: device.secretKey)
                    if found == nil { throw invalid("this store's recipient stanza does not open") }
                }
            }
            guard let key = found else {
                throw CredentialStorageError(.bundleNotForThisStore, "the bundle was not made for this store; export it again with this store's key from `credstore device show`")
            }
            fileKey = key
        }
        let streamHeader = Array(try reader.orInvalid { try $0.readRaw(count: Sodium.streamHeaderBytes) })
        let headerBytes = Array(bytes[0..<(bytes.count - reader.remaining)])
        guard let stream = Sodium.StreamReader(key: fileKey, header: streamHeader) else { throw invalid("bad stream header") }

        let digest = Sodium.Digest()
        digest.update(headerBytes)
        var contents: BundleContents?
        var expectedItems = 0, expectedDefaults = 0
        var signature: [UInt8]?
        var first = true
        while true {
            // A missing chunk is truncation, whatever the mode: only a chunk that is there and does
            // not open can mean a wrong passphrase.
            guard reader.remaining >= 4 else { throw invalid("it ends before its final chunk: truncated") }
            let lengthBytes = Array(try reader.readRaw(count: 4))
            let length = lengthBytes.reduce(0) { $0 << 8 | Int($1) }
            guard length <= maximumChunkBytes, reader.remaining >= length else {
                throw invalid("it ends inside a chunk: truncated")
            }
            guard let (plain, final) = stream.pull(try reader.readRaw(count: length), ad: first ? headerBytes : []) else {
                throw passphraseFailure(mode: mode, first: first) ?? invalid("a chunk fails authentication")
            }
            first = false
            var chunk = ByteReader(plain)
            guard let kind = ChunkKind(rawValue: try chunk.orInvalid({ try $0.readByte() })) else { throw invalid("unknown chunk") }
            if final {
                guard kind == .final else { throw invalid("a final tag on a non-final chunk") }
                guard reader.isAtEnd else { throw invalid("bytes follow the final chunk") }
                if mode == .recipients {
                    signature = Array(try chunk.orInvalid { try $0.readRaw(count: Sodium.signatureBytes) })
                }
                try chunk.orInvalid { try $0.expectEnd() }
                break
            }
            digest.update(plain)
            switch kind {
            case .metadata:
                guard contents == nil else { throw invalid("two metadata chunks") }
                let device = Array(try chunk.orInvalid { try $0.readRaw(count: DeviceIdentity.idBytes) })
                let signer = Array(try chunk.orInvalid { try $0.readRaw(count: Sodium.signPublicKeyBytes) })
                let created = try chunk.orInvalid { try $0.readInt64() }
                expectedItems = Int(try chunk.orInvalid { try $0.readInt64() })
                expectedDefaults = Int(try chunk.orInvalid { try $0.readInt64() })
                try chunk.orInvalid { try $0.expectEnd() }
                contents = BundleContents(
                    senderDevice: device, signer: mode == .recipients ? signer : nil, created: created, items: [], defaults: [])
            case .items:
                guard contents != nil else { throw invalid("items before metadata") }
                while !chunk.isAtEnd {
                    let item = try chunk.orInvalid { chunk in
                        BundleItem(
                            space: try chunk.readLengthPrefixedSpace(), user: try chunk.readString(),
                            stamp: try HybridTimestamp.read(from: &chunk), password: try chunk.readOptionalString())
                    }
                    contents!.items.append(item)
                }
            case .defaults:
                guard contents != nil else { throw invalid("defaults before metadata") }
                while !chunk.isAtEnd {
                    let choice = try chunk.orInvalid { chunk in
                        BundleDefault(
                            space: try chunk.readLengthPrefixedSpace(), user: try chunk.readOptionalString(),
                            stamp: try HybridTimestamp.read(from: &chunk))
                    }
                    contents!.defaults.append(choice)
                }
            case .final:
                throw invalid("a final chunk without the final tag")
            }
        }
        guard let contents, contents.items.count == expectedItems, contents.defaults.count == expectedDefaults else {
            throw invalid("its item counts do not match")
        }
        if mode == .recipients {
            guard let signer = contents.signer, let signature,
                  Sodium.verify(signature: signature, message: digest.finish(), publicKey: signer)
            else { throw invalid("its signature does not verify") }
        }
        return contents
    }

    /// In passphrase mode a first chunk that fails means a wrong passphrase far more often than damage.
    private static func passphraseFailure(mode: Mode, first: Bool) -> CredentialStorageError? {
        guard mode == .passphrase, first else { return nil }
        return CredentialStorageError(.wrongKey, "the bundle passphrase is wrong, or the bundle is damaged; check CREDSTORE_BUNDLE_PASSPHRASE")
    }
}

extension ByteReader {
    var remaining: Int { count - position }

    /// Runs a read, turning a shortfall into an `invalidBundle` error.
    mutating func orInvalid<T>(_ body: (inout ByteReader) throws -> T) throws -> T {
        do {
            return try body(&self)
        } catch {
            throw CredentialStorageError(.invalidBundle, "the bundle is not valid (malformed contents); it was damaged or altered: get a fresh copy")
        }
    }
}
