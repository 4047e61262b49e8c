import CredentialStoreCore
import CredentialStoreCrypto

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
