#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Length-prefixed binary fields, for the canonical space encoding and the change log.
///
/// Every variable-length field carries its length, so no two different inputs can encode to the
/// same bytes — the property blind indexes depend on.
package struct ByteWriter {
    package private(set) var bytes: [UInt8] = []

    /// Zeroes the buffer, for writers that held a secret.
    package mutating func wipe() {
        bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
    }

    package init(capacity: Int = 64) {
        bytes.reserveCapacity(capacity)
    }

    package mutating func append(_ byte: UInt8) {
        bytes.append(byte)
    }

    package mutating func append(_ value: Int64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            withUnsafeBytes(of: UInt32(utf8.count).bigEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: utf8)
        }
    }

    package mutating func append(optional text: String?) {
        if let text {
            append(UInt8(1))
            append(text)
        } else {
            append(UInt8(0))
        }
    }

    // Concrete overloads, not one generic: a generic called from another module runs
    // unspecialized, element by element through witness tables.
    package mutating func append(raw: [UInt8]) {
        bytes.append(contentsOf: raw)
    }

    package mutating func append(raw: ArraySlice<UInt8>) {
        bytes.append(contentsOf: raw)
    }

    package mutating func append(raw: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: raw)
    }
}
