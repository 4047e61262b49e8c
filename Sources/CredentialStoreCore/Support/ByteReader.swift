#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads what ``ByteWriter`` wrote; any shortfall or trailing garbage is an error.
package struct ByteReader {
    package struct Malformed: Error {
        package init() {}
    }

    private var bytes: [UInt8]
    private var offset = 0

    /// Zeroes the copy this reader made, for readers of a secret.
    package mutating func wipe() {
        bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
    }

    package var count: Int { bytes.count }
    package var position: Int { offset }

    // Concrete initializers, not one generic, for the reason given at `ByteWriter.append(raw:)`.
    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    package init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = Array(bytes)
    }

    package init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = Array(bytes)
    }

    package var isAtEnd: Bool { offset == bytes.count }

    /// The next byte, not consumed; nil at the end.
    package func peekByte() -> UInt8? {
        offset < bytes.count ? bytes[offset] : nil
    }

    package mutating func readByte() throws -> UInt8 {
        guard offset < bytes.count else { throw Malformed() }
        defer { offset += 1 }
        return bytes[offset]
    }

    package mutating func readInt64() throws -> Int64 {
        let raw = try readRaw(count: 8)
        return raw.reduce(Int64(0)) { ($0 << 8) | Int64($1) }
    }

    package mutating func readString() throws -> String {
        let lengthBytes = try readRaw(count: 4)
        let length = lengthBytes.reduce(0) { ($0 << 8) | Int($1) }
        let raw = try readRaw(count: length)
        guard let text = Self.validUTF8(raw) else { throw Malformed() }
        return text
    }

    /// The string of `bytes` when they are well-formed UTF-8, else nil. `String(validating:as:)`
    /// calls the standard library's validation unspecialized (generic over the encoding), which
    /// shows in every lookup's profile (docs/performance.md, "Lookup and set against C");
    /// decoding is specialized, and a decoded string whose bytes differ from the input was
    /// repaired, so the input was not UTF-8.
    static func validUTF8(_ bytes: ArraySlice<UInt8>) -> String? {
        guard !bytes.isEmpty else { return "" }
        var text = bytes.withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
        let intact = text.withUTF8 { decoded in
            decoded.count == bytes.count
                && bytes.withUnsafeBufferPointer { memcmp(decoded.baseAddress!, $0.baseAddress!, bytes.count) == 0 }
        }
        return intact ? text : nil
    }

    package mutating func readOptionalString() throws -> String? {
        switch try readByte() {
        case 0: return nil
        case 1: return try readString()
        default: throw Malformed()
        }
    }

    package mutating func readRaw(count: Int) throws -> ArraySlice<UInt8> {
        guard count >= 0, bytes.count - offset >= count else { throw Malformed() }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    package func expectEnd() throws {
        guard isAtEnd else { throw Malformed() }
    }
}
