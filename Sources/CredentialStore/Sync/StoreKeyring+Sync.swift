import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence

/// Sealing of the sync tables, bound like credential rows to their clear columns.
extension StoreKeyring {
    private enum SyncField: UInt8 {
        case item = 6, defaultChoice = 7, deviceSecret = 8, trustedKey = 9
    }

    /// The optional fields a register's plaintext may end with, each led by its tag.
    private enum ItemField: UInt8 {
        case publishedAt = 0x50, rememberedSince = 0x52, unpublished = 0x55
    }

    private func itemAD(spaceIndex: BlindIndex, userIndex: BlindIndex, deleted: Bool, wall: Int64) -> [UInt8] {
        var writer = ByteWriter(capacity: 56)
        writer.append(SyncField.item.rawValue)
        writer.append(raw: spaceIndex.bytes)
        writer.append(raw: userIndex.bytes)
        writer.append(UInt8(deleted ? 1 : 0))
        writer.append(wall)
        return writer.bytes
    }

    /// Encrypts an item register; pass the blind indexes when the caller already has them.
    func encrypt(_ state: SyncItemState, spaceIndex knownSpaceIndex: BlindIndex? = nil, userIndex knownUserIndex: BlindIndex? = nil) -> SealedSyncItem {
        let spaceIndex = knownSpaceIndex ?? spaceIndex(state.space)
        let userIndex = knownUserIndex ?? userIndex(spaceIndex: spaceIndex, user: state.user)
        var plain = ByteWriter(capacity: 128)
        plain.append(raw: state.space.canonicalEncoding.lengthPrefixed)
        plain.append(state.user)
        state.stamp.write(to: &plain)
        if let publishedAt = state.publishedAt {
            plain.append(ItemField.publishedAt.rawValue)
            plain.append(publishedAt)
        }
        if let rememberedSince = state.rememberedSince {
            plain.append(ItemField.rememberedSince.rawValue)
            plain.append(rememberedSince)
        }
        if state.unpublished { plain.append(ItemField.unpublished.rawValue) }
        let wall = state.expiryBase
        return SealedSyncItem(
            spaceIndex: spaceIndex, userIndex: userIndex, deleted: state.deleted, wall: wall,
            sealedState: encrypt(plain.bytes, ad: itemAD(spaceIndex: spaceIndex, userIndex: userIndex, deleted: state.deleted, wall: wall)))
    }

    func decrypt(_ item: SealedSyncItem) throws -> SyncItemState {
        let ad = itemAD(spaceIndex: item.spaceIndex, userIndex: item.userIndex, deleted: item.deleted, wall: item.wall)
        let state = decrypt(item.sealedState, ad: ad) { plain -> SyncItemState? in
            var reader = ByteReader(plain)
            do {
                var state = SyncItemState(
                    space: try reader.readLengthPrefixedSpace(), user: try reader.readString(),
                    stamp: try HybridTimestamp.read(from: &reader), deleted: item.deleted)
                // Each optional field once, in tag order, and only on a tombstone.
                var last: UInt8 = 0
                while !reader.isAtEnd {
                    let tag = try reader.readByte()
                    guard item.deleted, tag > last else { return nil }
                    last = tag
                    switch ItemField(rawValue: tag) {
                    case .rememberedSince:
                        let since = try reader.readInt64()
                        guard since > state.stamp.wall else { return nil }
                        state.rememberedSince = since
                    case .unpublished:
                        state.unpublished = true
                    case .publishedAt:
                        state.publishedAt = try reader.readInt64()
                    case nil:
                        return nil
                    }
                }
                try reader.expectEnd()
                return state
            } catch {
                return nil
            }
        } ?? nil
        guard let state, state.expiryBase == item.wall, spaceIndex(state.space) == item.spaceIndex,
              userIndex(spaceIndex: item.spaceIndex, user: state.user) == item.userIndex
        else { throw Self.tampered }
        return state
    }

    func encrypt(_ state: SyncDefaultState, spaceIndex knownSpaceIndex: BlindIndex? = nil) -> SealedSyncDefault {
        let spaceIndex = knownSpaceIndex ?? spaceIndex(state.space)
        var plain = ByteWriter(capacity: 128)
        plain.append(raw: state.space.canonicalEncoding.lengthPrefixed)
        plain.append(optional: state.user)
        state.stamp.write(to: &plain)
        return SealedSyncDefault(spaceIndex: spaceIndex, sealedState: encrypt(plain.bytes, ad: [SyncField.defaultChoice.rawValue] + spaceIndex.bytes))
    }

    func decrypt(_ choice: SealedSyncDefault) throws -> SyncDefaultState {
        let state = decrypt(choice.sealedState, ad: [SyncField.defaultChoice.rawValue] + choice.spaceIndex.bytes) { plain -> SyncDefaultState? in
            // do/catch, not `try?`: a nil user ("no default") is a valid value, which `try?` would
            // flatten into a failure.
            var reader = ByteReader(plain)
            do {
                let state = SyncDefaultState(
                    space: try reader.readLengthPrefixedSpace(), user: try reader.readOptionalString(),
                    stamp: try HybridTimestamp.read(from: &reader))
                try reader.expectEnd()
                return state
            } catch {
                return nil
            }
        } ?? nil
        guard let state, spaceIndex(state.space) == choice.spaceIndex else { throw Self.tampered }
        return state
    }

    func encryptDeviceSecret(_ secret: SecureBytes, deviceID: [UInt8], publicKey: [UInt8]) -> [UInt8] {
        secret.withUnsafeBytes { raw in
            var copy = Array(raw)
            defer { Sodium.zero(&copy) }
            return encrypt(copy, ad: [SyncField.deviceSecret.rawValue] + deviceID + publicKey)
        }
    }

    func decryptDeviceSecret(_ device: SealedDevice) throws -> SecureBytes {
        let secret = try decrypt(device.sealedSecretKey, ad: [SyncField.deviceSecret.rawValue] + device.deviceID + device.publicKey) {
            try SecureBytes(copying: $0)
        }
        guard let secret else { throw Self.tampered }
        return secret
    }

    func trustedKeyIndex(_ publicKey: DeviceKey) -> BlindIndex {
        blindIndex(.trustedKey, publicKey.bytes)
    }

    /// Encrypts a trusted device's row: its key, when it was trusted and when its last bundle was
    /// merged (milliseconds; nil unknown or never), and the statement that revoked it, if one did.
    /// It all sits inside the sealed value, so the table seal, which covers that value, covers it too.
    func encryptTrustedDevice(_ record: TrustedDeviceRecord) -> [UInt8] {
        var plain = ByteWriter(capacity: 48 + RevocationStatement.encodedBytes)
        plain.append(raw: record.publicKey.bytes)
        plain.append(record.trusted ?? 0)
        plain.append(record.lastMerged ?? 0)
        if let revocation = record.revocation {
            plain.append(TrustedDeviceRecord.revocationTag)
            revocation.write(to: &plain)
        }
        if let overridden = record.overridesRevocationsUpTo {
            plain.append(TrustedDeviceRecord.overrideTag)
            plain.append(overridden)
        }
        if let created = record.lastMergedCreated {
            plain.append(TrustedDeviceRecord.lastMergedCreatedTag)
            plain.append(created)
        }
        if let merged = record.mergedOwnBundle {
            plain.append(TrustedDeviceRecord.mergedOwnBundleTag)
            plain.append(merged)
        }
        return encrypt(plain.bytes, ad: [SyncField.trustedKey.rawValue] + trustedKeyIndex(record.publicKey).bytes)
    }

    /// A trusted device's row opened. Rows written before the times were kept hold the key alone;
    /// rows written before revocations travelled end after the times.
    func decryptTrustedDevice(keyIndex: BlindIndex, sealed: [UInt8]) -> TrustedDeviceRecord? {
        let record = decrypt(sealed, ad: [SyncField.trustedKey.rawValue] + keyIndex.bytes) { plain -> TrustedDeviceRecord? in
            var reader = ByteReader(plain)
            guard let key = try? DeviceKey(bytes: Array(reader.readRaw(count: Sodium.signPublicKeyBytes))) else { return nil }
            if reader.isAtEnd { return TrustedDeviceRecord(publicKey: key) }
            guard let trusted = try? reader.readInt64(), let merged = try? reader.readInt64() else { return nil }
            var record = TrustedDeviceRecord(publicKey: key, trusted: trusted > 0 ? trusted : nil, lastMerged: merged > 0 ? merged : nil)
            // Tagged fields, each at most once, in this order.
            if !reader.isAtEnd, reader.peekByte() == TrustedDeviceRecord.revocationTag {
                _ = try? reader.readByte()
                guard let revocation = try? RevocationStatement.read(from: &reader), revocation.revoked == key else { return nil }
                record.revocation = revocation
            }
            if !reader.isAtEnd, reader.peekByte() == TrustedDeviceRecord.overrideTag {
                _ = try? reader.readByte()
                guard let overridden = try? reader.readInt64() else { return nil }
                record.overridesRevocationsUpTo = overridden
            }
            if !reader.isAtEnd, reader.peekByte() == TrustedDeviceRecord.lastMergedCreatedTag {
                _ = try? reader.readByte()
                guard let created = try? reader.readInt64() else { return nil }
                record.lastMergedCreated = created
            }
            if !reader.isAtEnd, reader.peekByte() == TrustedDeviceRecord.mergedOwnBundleTag {
                _ = try? reader.readByte()
                guard let merged = try? reader.readInt64() else { return nil }
                record.mergedOwnBundle = merged
            }
            return reader.isAtEnd ? record : nil
        } ?? nil
        guard let record, trustedKeyIndex(record.publicKey) == keyIndex else { return nil }
        return record
    }

    /// The key of a device this store trusts now: nil for a revoked device's row.
    func decryptTrustedKey(keyIndex: BlindIndex, sealed: [UInt8]) -> DeviceKey? {
        guard let record = decryptTrustedDevice(keyIndex: keyIndex, sealed: sealed), record.revocation == nil else { return nil }
        return record.publicKey
    }
}
