/// One synchronizable item as a bundle carries it; a nil password is a deletion (tombstone).
struct BundleItem: Hashable, Sendable {
    var space: ProtectionSpace
    var user: String
    var stamp: HybridTimestamp
    var password: String?
    /// The credential's details (expiry, refresh token, label, comment, attributes) as the store
    /// seals them after user and password (``StoreKeyring/appendDetails(of:to:)``); empty when it
    /// has none, and always in a bundle of format 1, which predates them.
    var details: [UInt8] = []
    /// For a tombstone a stale store recorded: when, by that store's clock (``SyncItemState/rememberedSince``).
    /// Format 2 and later carry it where a live item's details go.
    var rememberedSince: Int64? = nil
}

/// One space's default choice as a bundle carries it; a nil user is "no default".
struct BundleDefault: Hashable, Sendable {
    var space: ProtectionSpace
    var user: String?
    var stamp: HybridTimestamp
}

import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a bundle holds once opened and checked.
struct BundleContents: Sendable {
    var senderDevice: [UInt8]
    /// The signer's key, for a recipient-mode bundle (passphrase bundles are not signed).
    var signer: DeviceKey?
    var created: Int64
    var items: [BundleItem]
    var defaults: [BundleDefault]
    /// The revocations the writer applied (its own untrusts and those it relays); format 3 on.
    var revocations: [RevocationStatement] = []
    /// For each device whose bundle the writer merged: that device's key and when the newest
    /// bundle of it the writer merged was made, by its own clock; format 4 on. A device reading
    /// its own key here learns which of its bundles the writer has merged, so which of its
    /// deletions the writer holds (``SyncLedger/dropExpiredTombstones()``).
    var merged: [BundleMergeNote] = []
}

/// The byte layout of a bundle; docs/sync-format.md describes it for people.
///
///     header  = "CSBUNDLE" version:u8 mode:u8 mode-fields stream-header[24]   (version 4; 1 to 3 are read too)
///     passphrase mode fields = salt[16] opslimit:u64 memlimit:u64
///     recipient mode fields  = count:u16 (key-id[8] sealed-file-key[80]){count}
///     body    = (length:u32 secretstream-chunk[length])*   — the last chunk tagged FINAL, then EOF
///
/// The first chunk's associated data is the whole header, so no header byte can change unnoticed.
/// Chunks: metadata, then (format 3 on) one chunk of revocation statements when there are any, then
/// items in batches, then defaults, then a final chunk holding the Ed25519 signature (over the header
/// and every earlier plaintext) in recipient mode, or nothing in passphrase mode. The revocations
/// come first so that a reader can learn them without reading the items.
enum BundleFormat {
    static let magic: [UInt8] = Array("CSBUNDLE".utf8)
    /// The format export writes: 4 since the metadata records which bundles the writer merged;
    /// 3 added revocations (the metadata counts them, and a chunk of them follows it); 2 added
    /// details to items. Formats 1 to 3 are read as well.
    static let version: UInt8 = 4
    static let oldestReadableVersion: UInt8 = 1
    /// At most this many items go in one chunk…
    static let itemsPerChunk = 1024
    /// …and a chunk is cut once its plaintext reaches this size, so a reader's memory follows a
    /// chunk of about this size whatever the bundle's.
    static let targetChunkBytes = 1 << 20
    /// The largest encoded item (space, user, stamp, password and details) export writes or import reads.
    static let maximumItemBytes = 1 << 20
    static let maximumRecipients = 4096
    /// At most this many revocation statements travel in one bundle (one chunk of about 550 KiB).
    static let maximumRevocations = 4096
    /// At most this many merge notes (one per device the writer trusts) travel in one bundle.
    static let maximumMergeNotes = 4096

    /// The header byte that says which ``BundleProtection`` a bundle has.
    enum Mode: UInt8 {
        case passphrase = 1, recipients = 2
    }

    /// The first byte of each chunk's plaintext.
    enum ChunkKind: UInt8 {
        case metadata = 0x4D, revocations = 0x52, items = 0x49, defaults = 0x44, final = 0x46
    }

    static func keyID(_ publicKey: DeviceKey) -> [UInt8] {
        Sodium.hash(publicKey.bytes, outputBytes: 8)
    }

    // MARK: Writing

    /// Writes a bundle. `itemLimit` is ``maximumItemBytes`` but for tests, which forge an item
    /// over the limit to see a reader refuse it.
    static func write(
        _ contents: BundleContents, protection: BundleProtection, signer: DeviceIdentity, itemLimit: Int = maximumItemBytes,
        formatVersion: UInt8 = version
    ) throws -> [UInt8] {
        precondition((oldestReadableVersion...version).contains(formatVersion))
        var header = ByteWriter(capacity: 256)
        header.append(raw: magic)
        header.append(formatVersion)
        let fileKey: SecureBytes
        switch protection {
        case .passphrase(let passphrase):
            guard !passphrase.isEmpty else {
                throw CredentialStorageError(.invalidInput, "the bundle passphrase is empty; give a passphrase")
            }
            header.append(Mode.passphrase.rawValue)
            let salt = Sodium.randomBytes(Sodium.passwordSaltBytes)
            let cost = Sodium.PasswordHashCost.forNewBundleKey
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
                guard let sealed = Sodium.sealedBox(fileKey, toSigningKey: recipient.bytes) else {
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
        metadata.append(raw: contents.signer?.bytes ?? [UInt8](repeating: 0, count: Sodium.signPublicKeyBytes))
        metadata.append(contents.created)
        metadata.append(Int64(contents.items.count))
        metadata.append(Int64(contents.defaults.count))
        let revocations = formatVersion >= 3 ? contents.revocations : []
        if formatVersion >= 3 {
            guard revocations.count <= maximumRevocations else {
                throw CredentialStorageError(.invalidInput, "a bundle carries at most \(maximumRevocations) revocations")
            }
            metadata.append(Int64(revocations.count))
        }
        if formatVersion >= 4 {
            let notes = contents.merged.prefix(maximumMergeNotes)
            metadata.append(Int64(notes.count))
            for note in notes {
                metadata.append(raw: note.device.bytes)
                metadata.append(note.created)
            }
        }
        emit(metadata.bytes)
        if !revocations.isEmpty {
            var chunk = ByteWriter(capacity: 1 + revocations.count * RevocationStatement.encodedBytes)
            chunk.append(ChunkKind.revocations.rawValue)
            for statement in revocations { statement.write(to: &chunk) }
            emit(chunk.bytes)
        }

        // Items and defaults go in chunks of at most `itemsPerChunk` entries, cut early once a
        // chunk's plaintext reaches `targetChunkBytes`.
        var chunk = ByteWriter(capacity: 128 * itemsPerChunk)
        var entries = 0
        func flush(_ kind: ChunkKind) {
            guard entries > 0 else { return }
            var bytes = [kind.rawValue] + chunk.bytes
            emit(bytes)
            Sodium.zero(&bytes)
            chunk.wipe()
            chunk = ByteWriter(capacity: 128 * itemsPerChunk)
            entries = 0
        }
        for item in contents.items {
            let before = chunk.bytes.count
            chunk.append(raw: item.space.canonicalEncoding.lengthPrefixed)
            chunk.append(item.user)
            item.stamp.write(to: &chunk)
            chunk.append(optional: item.password)
            if formatVersion >= 2 {
                if item.password == nil, let rememberedSince = item.rememberedSince {
                    chunk.append(Int64(8))
                    chunk.append(rememberedSince)
                } else {
                    chunk.append(Int64(item.details.count))
                    chunk.append(raw: item.details)
                }
            }
            guard chunk.bytes.count - before <= itemLimit else {
                chunk.wipe()
                throw CredentialStorageError(.invalidInput, "the credential of \(item.user) at \(item.space.host) is larger than a bundle carries (1 MiB); nothing was exported")
            }
            entries += 1
            if entries == itemsPerChunk || chunk.bytes.count >= targetChunkBytes { flush(.items) }
        }
        flush(.items)
        for choice in contents.defaults {
            chunk.append(raw: choice.space.canonicalEncoding.lengthPrefixed)
            chunk.append(optional: choice.user)
            choice.stamp.write(to: &chunk)
            entries += 1
            if entries == itemsPerChunk || chunk.bytes.count >= targetChunkBytes { flush(.defaults) }
        }
        flush(.defaults)
        var final: [UInt8] = [ChunkKind.final.rawValue]
        if case .recipients = protection {
            final += Sodium.sign(digest.finish(), secretKey: signer.secretKey)
        }
        emit(final, final: true)
        return output
    }

    // MARK: Reading

    static func invalid(_ why: String) -> CredentialStorageError {
        CredentialStorageError(.invalidBundle, "the bundle is not valid (\(why)); it was damaged or altered: get a fresh copy")
    }

    /// Opens and checks a whole bundle held in memory: header, every chunk's authentication, the
    /// final tag, nothing after it, the item counts and, in recipient mode, the signature.
    /// Imports stream a file through ``BundleStream`` instead; this is for bundles already in memory.
    static func read(_ bytes: [UInt8], passphrase: String?, device: DeviceIdentity?) throws -> BundleContents {
        let stream = try BundleStream(source: BundleByteSource(bytes), passphrase: passphrase, device: device)
        var contents = BundleContents(
            senderDevice: stream.metadata.senderDevice, signer: stream.metadata.signer, created: stream.metadata.created,
            items: [], defaults: [], merged: stream.metadata.merged)
        while let chunk = try stream.next() {
            switch chunk {
            case .revocations(let statements): contents.revocations += statements
            case .items(let items): contents.items += items
            case .defaults(let defaults): contents.defaults += defaults
            }
        }
        return contents
    }
}

/// The fields of a bundle's metadata chunk.
struct BundleMetadata: Hashable, Sendable {
    var senderDevice: [UInt8]
    /// The signer's key, in recipient mode.
    var signer: DeviceKey?
    var created: Int64
    var itemCount: Int64
    var defaultCount: Int64
    /// How many revocation statements follow the metadata (0 before format 3).
    var revocationCount: Int64 = 0
    /// Which devices' bundles the writer merged, and the newest of each (none before format 4).
    var merged: [BundleMergeNote] = []
}

/// Where a bundle's bytes come from: a file read a bounded piece at a time, or bytes in memory.
protocol BundleSource: AnyObject {
    /// Exactly `count` bytes, or nil when fewer than `count` are left (then the source is spent).
    func read(count: Int) throws -> [UInt8]?
    /// Whether no byte is left.
    func isAtEnd() throws -> Bool
}

/// Bytes already in memory.
final class BundleByteSource: BundleSource {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    func read(count: Int) -> [UInt8]? {
        guard count >= 0, bytes.count - offset >= count else { offset = bytes.count; return nil }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    func isAtEnd() -> Bool { offset == bytes.count }
}

/// A bundle file, read piece by piece so that memory follows the largest chunk, never the file.
///
/// Only a regular file is read: a FIFO would block, and a device such as `/dev/zero` never ends.
/// The file is opened without blocking and checked with `fstat` before any byte is read.
final class BundleFileSource: BundleSource {
    private let descriptor: Int32
    private var peeked: UInt8?

    init(url: URL) throws {
        let descriptor = open(url.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CredentialStorageError(.notFound, "could not read the bundle \(url.path); check the path")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw CredentialStorageError(.invalidBundle, "\(url.path) is not a regular file, so it is not a bundle; nothing was read from it")
        }
        // Back to blocking reads, which a regular file never needs to wait for anyway.
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    func read(count: Int) throws -> [UInt8]? {
        guard count >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: count)
        var filled = 0
        if count > 0, let byte = peeked {
            buffer[0] = byte
            filled = 1
            peeked = nil
        }
        while filled < count {
            let got = buffer.withUnsafeMutableBytes { raw in
                Glibc.read(descriptor, raw.baseAddress! + filled, count - filled)
            }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { throw CredentialStorageError(.io, "reading the bundle failed: \(String(cString: strerror(errno)))") }
            if got == 0 { return nil }
            filled += got
        }
        return buffer
    }

    func isAtEnd() throws -> Bool {
        if peeked != nil { return false }
        guard let byte = try read(count: 1) else { return true }
        peeked = byte[0]
        return false
    }
}

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
