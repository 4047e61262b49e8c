import CredentialStoreCore
import CredentialStoreCrypto

/// A bundle opened for streaming: the header is read and the file key found when it is made,
/// the metadata chunk is read and checked (``BundleStream/metadata``) before any item chunk, and
/// ``next()`` then yields the item and default chunks one at a time. The final chunk's checks
/// (nothing after it, item counts, signature) run when ``next()`` returns nil: whatever a caller
/// did with the chunks before must be undone (a transaction rolled back) if that throws.
final class BundleStream {
    enum Chunk {
        /// Comes before any items, in one chunk, when the bundle carries revocations.
        case revocations([RevocationStatement])
        case items([BundleItem])
        case defaults([BundleDefault])
    }

    private typealias Mode = BundleFormat.Mode
    private typealias ChunkKind = BundleFormat.ChunkKind

    /// The largest chunk a reader accepts: writers cut chunks near ``BundleFormat/targetChunkBytes``,
    /// so this is room to spare, and it bounds what one chunk can make a reader allocate.
    static let maximumChunkBytes = 8 << 20

    let source: any BundleSource
    /// Every header byte, which the first chunk authenticates.
    let headerBytes: [UInt8]
    let fileKey: SecureBytes
    private let mode: Mode
    /// The bundle's format: items of format 2 and later end with their details.
    private let formatVersion: UInt8
    private let stream: Sodium.StreamReader
    private let digest = Sodium.Digest()
    private(set) var metadata: BundleMetadata
    /// The key ids of a recipient-mode bundle's recipients, in header order (none in passphrase mode).
    private(set) var recipientIDs: [[UInt8]] = []
    /// The metadata chunk's plaintext, so a second pass over the same file can prove it read the same bundle.
    private(set) var metadataPlaintext: [UInt8] = []
    private var items: Int64 = 0, defaults: Int64 = 0, revocations: Int64 = 0
    private var finished = false

    /// Reads the header and the metadata chunk.
    ///
    /// - Parameters:
    ///   - fileKey: the key an earlier pass over the same header derived, so a passphrase bundle's
    ///     Argon2id runs once; the header bytes must then equal `expectedHeader`.
    init(
        source: any BundleSource, passphrase: String?, device: DeviceIdentity?,
        reuse earlier: (header: [UInt8], fileKey: SecureBytes)? = nil
    ) throws {
        self.source = source
        var header = ByteWriter(capacity: 256)
        func take(_ count: Int) throws -> [UInt8] {
            guard let bytes = try source.read(count: count) else { throw BundleFormat.invalid("it ends inside its header: truncated") }
            header.append(raw: bytes)
            return bytes
        }
        guard (try? source.read(count: BundleFormat.magic.count)) == BundleFormat.magic else {
            throw BundleFormat.invalid("not a credstore bundle")
        }
        header.append(raw: BundleFormat.magic)
        let version = try take(1)[0]
        guard version <= BundleFormat.version else {
            throw CredentialStorageError(.unsupportedFormatVersion, "the bundle has format \(version), newer than this credstore reads; upgrade credstore")
        }
        guard version >= BundleFormat.oldestReadableVersion, let mode = Mode(rawValue: try take(1)[0]) else {
            throw BundleFormat.invalid("unknown bundle mode")
        }
        self.mode = mode
        self.formatVersion = version
        var fileKey = earlier?.fileKey
        switch mode {
        case .passphrase:
            let salt = try take(Sodium.passwordSaltBytes)
            var fields = ByteReader(try take(16))
            let ops = try fields.readInt64(), mem = try fields.readInt64()
            // No more than export asks for: a header is 88 bytes anyone can write, and what it asks
            // for is spent before the passphrase can be checked.
            let most = Sodium.bundlePasswordCost
            guard ops >= 1, UInt64(ops) <= most.opsLimit, mem >= 8192, mem <= Int64(most.memLimit) else {
                throw BundleFormat.invalid("its key-derivation parameters ask for more than credstore's export uses")
            }
            guard let passphrase, !passphrase.isEmpty else {
                // A key missing, as a wrong one is: never a fault of the bundle's contents.
                throw CredentialStorageError(.wrongKey, "this bundle is protected by a passphrase, and none was given")
            }
            if fileKey == nil {
                fileKey = try Sodium.passwordHash(passphrase, salt: salt, cost: .init(opsLimit: UInt64(ops), memLimit: Int(mem)))
            }
        case .recipients:
            let countBytes = try take(2)
            let count = Int(countBytes[0]) << 8 | Int(countBytes[1])
            guard count >= 1, count <= BundleFormat.maximumRecipients else { throw BundleFormat.invalid("bad recipient count") }
            var mine: [UInt8]?
            var ids: [[UInt8]] = []
            for _ in 0..<count {
                let id = try take(8)
                ids.append(id)
                let sealed = try take(80)
                if mine == nil, let device, id == BundleFormat.keyID(device.publicKey) { mine = sealed }
            }
            if fileKey == nil {
                guard let device, let mine else {
                    throw CredentialStorageError(.bundleNotForThisStore, "the bundle was not sealed to this store; the store that wrote it must trust this store's device key, then write the bundle again")
                }
                guard let key = try Sodium.openSealedBox(mine, publicKey: device.publicKey.bytes, secretKey: device.secretKey) else {
                    throw BundleFormat.invalid("this store's recipient stanza does not open")
                }
                fileKey = key
            }
            recipientIDs = ids
        }
        let streamHeader = try take(Sodium.streamHeaderBytes)
        headerBytes = header.bytes
        if let earlier, earlier.header != headerBytes { throw BundleFormat.invalid("it changed while it was being read") }
        guard let fileKey, let stream = Sodium.StreamReader(key: fileKey, header: streamHeader) else {
            throw BundleFormat.invalid("bad stream header")
        }
        self.fileKey = fileKey
        self.stream = stream
        digest.update(headerBytes)
        metadata = BundleMetadata(senderDevice: [], signer: nil, created: 0, itemCount: 0, defaultCount: 0)

        let (plain, final) = try pull(first: true)
        var chunk = ByteReader(plain)
        guard !final, (try? chunk.readByte()) == ChunkKind.metadata.rawValue else { throw BundleFormat.invalid("it does not start with its metadata") }
        metadata = try chunk.orInvalid { chunk in
            var fields = BundleMetadata(
                senderDevice: Array(try chunk.readRaw(count: DeviceIdentity.idBytes)),
                signer: DeviceKey(bytes: Array(try chunk.readRaw(count: Sodium.signPublicKeyBytes))),
                created: try chunk.readInt64(), itemCount: try chunk.readInt64(), defaultCount: try chunk.readInt64(),
                revocationCount: version >= 3 ? try chunk.readInt64() : 0)
            if version >= 4 {
                let count = try chunk.readInt64()
                guard (0...Int64(BundleFormat.maximumMergeNotes)).contains(count) else { throw ByteReader.Malformed() }
                for _ in 0..<count {
                    let key = try DeviceKey(bytes: Array(chunk.readRaw(count: Sodium.signPublicKeyBytes)))
                    fields.merged.append(BundleMergeNote(device: key, created: try chunk.readInt64()))
                }
            }
            try chunk.expectEnd()
            return fields
        }
        if mode != .recipients { metadata.signer = nil }
        guard metadata.itemCount >= 0, metadata.defaultCount >= 0 else { throw BundleFormat.invalid("negative item counts") }
        guard (0...Int64(BundleFormat.maximumRevocations)).contains(metadata.revocationCount) else {
            throw BundleFormat.invalid("it claims more revocations than a bundle carries")
        }
        metadataPlaintext = plain
        digest.update(plain)
    }

    /// One chunk, authenticated; the reading of its length can neither overflow nor allocate more
    /// than ``maximumChunkBytes``.
    private func pull(first: Bool) throws -> (plain: [UInt8], final: Bool) {
        // A missing chunk is truncation, whatever the mode: only a chunk that is there and does
        // not open can mean a wrong passphrase.
        guard let lengthBytes = try source.read(count: 4) else { throw BundleFormat.invalid("it ends before its final chunk: truncated") }
        let length = lengthBytes.reduce(0) { $0 << 8 | Int($1) }
        guard length <= Self.maximumChunkBytes else { throw BundleFormat.invalid("a chunk is larger than any credstore writes") }
        guard let ciphertext = try source.read(count: length) else { throw BundleFormat.invalid("it ends inside a chunk: truncated") }
        guard let opened = stream.pull(ciphertext[...], ad: first ? headerBytes : []) else {
            if mode == .passphrase, first {
                throw CredentialStorageError(.wrongKey, "the bundle passphrase is wrong, or the bundle is damaged; check the passphrase")
            }
            throw BundleFormat.invalid("a chunk fails authentication")
        }
        return (opened.plaintext, opened.final)
    }

    /// The next item or default chunk, or nil after the final chunk and every end-of-bundle check.
    func next() throws -> Chunk? {
        guard !finished else { return nil }
        let (plain, final) = try pull(first: false)
        var chunk = ByteReader(plain)
        guard let kind = ChunkKind(rawValue: try chunk.orInvalid({ try $0.readByte() })) else { throw BundleFormat.invalid("unknown chunk") }
        if final {
            guard kind == .final else { throw BundleFormat.invalid("a final tag on a non-final chunk") }
            guard try source.isAtEnd() else { throw BundleFormat.invalid("bytes follow the final chunk") }
            var signature: [UInt8]?
            if mode == .recipients {
                signature = Array(try chunk.orInvalid { try $0.readRaw(count: Sodium.signatureBytes) })
            }
            try chunk.orInvalid { try $0.expectEnd() }
            guard items == metadata.itemCount, defaults == metadata.defaultCount, revocations == metadata.revocationCount else {
                throw BundleFormat.invalid("its item counts do not match")
            }
            if mode == .recipients {
                guard let signer = metadata.signer, let signature,
                      Sodium.verify(signature: signature, message: digest.finish(), publicKey: signer.bytes)
                else { throw BundleFormat.invalid("its signature does not verify") }
            }
            finished = true
            return nil
        }
        digest.update(plain)
        switch kind {
        case .revocations:
            // One chunk of them, before any item or default: a reader may stop after it.
            guard revocations == 0, items == 0, defaults == 0 else { throw BundleFormat.invalid("revocations after its items") }
            var result: [RevocationStatement] = []
            while !chunk.isAtEnd {
                result.append(try chunk.orInvalid { try RevocationStatement.read(from: &$0) })
            }
            revocations = Int64(result.count)
            guard revocations == metadata.revocationCount else { throw BundleFormat.invalid("its revocation count does not match") }
            return .revocations(result)
        case .items:
            guard revocations == metadata.revocationCount else { throw BundleFormat.invalid("its revocations are missing") }
            var result: [BundleItem] = []
            while !chunk.isAtEnd {
                let start = chunk.position
                let formatVersion = formatVersion
                result.append(try chunk.orInvalid { chunk in
                    var item = BundleItem(
                        space: try chunk.readLengthPrefixedSpace(), user: try chunk.readString(),
                        stamp: try HybridTimestamp.read(from: &chunk), password: try chunk.readOptionalString())
                    if formatVersion >= 2 {
                        let count = try chunk.readInt64()
                        guard (0...Int64(BundleFormat.maximumItemBytes)).contains(count) else { throw ByteReader.Malformed() }
                        if item.password == nil {
                            // A tombstone's slot holds when a stale store recorded it, or nothing.
                            guard count == 0 || count == 8 else { throw ByteReader.Malformed() }
                            if count == 8 { item.rememberedSince = try chunk.readInt64() }
                        } else {
                            item.details = Array(try chunk.readRaw(count: Int(count)))
                        }
                    }
                    return item
                })
                guard chunk.position - start <= BundleFormat.maximumItemBytes else { throw BundleFormat.invalid("an item is larger than any credstore writes") }
            }
            items += Int64(result.count)
            guard items <= metadata.itemCount else { throw BundleFormat.invalid("its item counts do not match") }
            return .items(result)
        case .defaults:
            guard revocations == metadata.revocationCount else { throw BundleFormat.invalid("its revocations are missing") }
            var result: [BundleDefault] = []
            while !chunk.isAtEnd {
                result.append(try chunk.orInvalid { chunk in
                    BundleDefault(
                        space: try chunk.readLengthPrefixedSpace(), user: try chunk.readOptionalString(),
                        stamp: try HybridTimestamp.read(from: &chunk))
                })
            }
            defaults += Int64(result.count)
            guard defaults <= metadata.defaultCount else { throw BundleFormat.invalid("its item counts do not match") }
            return .defaults(result)
        case .metadata:
            throw BundleFormat.invalid("two metadata chunks")
        case .final:
            throw BundleFormat.invalid("a final chunk without the final tag")
        }
    }
}
