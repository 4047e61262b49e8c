import CredentialStoreCore

extension [UInt8] {
    /// The bytes behind an 8-byte big-endian length, so they can sit among other fields.
    var lengthPrefixed: [UInt8] {
        var writer = ByteWriter(capacity: count + 8)
        writer.append(Int64(count))
        writer.append(raw: self)
        return writer.bytes
    }
}
