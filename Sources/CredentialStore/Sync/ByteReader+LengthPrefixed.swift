import CredentialStoreCore

extension ByteReader {
    mutating func readLengthPrefixedSpace() throws -> ProtectionSpace {
        let length = try readInt64()
        guard length >= 0, length <= 1 << 16 else { throw Malformed() }
        return try ProtectionSpace(canonicalEncoding: try readRaw(count: Int(length)))
    }
}
