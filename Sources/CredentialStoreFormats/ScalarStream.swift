#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The scalars of an open file, read 64 KiB at a time and decoded as strict UTF-8, so that a
/// parser's memory is its own state and not the file's size.
///
/// The decoding is the well-formed byte sequences of the Unicode Standard's table 3-7 (no
/// overlong forms, surrogates or values past U+10FFFF), written out rather than taken from the
/// standard library's parser for its ASCII fast path: an import reads every byte of its file
/// three or four times. The fuzz target checks it against `String(validating:as:)`.
package struct ScalarStream: ScalarSource {
    /// nil when `buffer` holds the whole input.
    private let descriptor: Int32?
    private var buffer: [UInt8]
    private var index = 0
    /// How much of `buffer` the last read filled.
    private var end: Int
    /// What the input is called in an error: "the file", a path.
    private let name: String
    /// What owns the descriptor, kept alive (and the descriptor open) while this reads it, and
    /// told of every chunk read.
    private let owner: (any ScalarStreamOwner)?
    private static let chunk = 64 * 1024

    /// Reads `descriptor` from where it stands; `owner` closes it once nothing holds it.
    package init(descriptor: Int32, name: String, owner: any ScalarStreamOwner) {
        self.descriptor = descriptor
        buffer = [UInt8](repeating: 0, count: Self.chunk)
        end = 0
        self.name = name
        self.owner = owner
    }

    /// Reads bytes already in memory (a pipe's, which cannot be read twice).
    package init(bytes: [UInt8], name: String) {
        descriptor = nil
        buffer = bytes
        end = bytes.count
        self.name = name
        owner = nil
    }

    /// The next byte; nil at the end of the input.
    private mutating func nextByte() throws -> UInt8? {
        if index == end {
            guard let descriptor else { return nil }
            var count: Int
            repeat {
                count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            } while count < 0 && errno == EINTR
            guard count >= 0 else {
                throw ReadError("could not read \(name): \(String(cString: strerror(errno))); nothing was imported")
            }
            (index, end) = (0, count)
            guard count > 0 else { return nil }
            buffer.withUnsafeBytes { owner?.didRead(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        }
        defer { index += 1 }
        return buffer[index]
    }

    /// The line being read, from 1, for an error.
    private var line = 1

    private var notUTF8: FormatError {
        FormatError("line \(line) of \(name) is not UTF-8 text; export it again as UTF-8 (every manager's export is); nothing was imported")
    }

    package mutating func nextScalar() throws -> Unicode.Scalar? {
        guard let lead = try nextByte() else { return nil }
        if lead < 0x80 {
            if lead == UInt8(ascii: "\n") { line += 1 }
            return Unicode.Scalar(lead)
        }
        // The continuation bytes that may follow, the first one's range depending on the lead.
        let count: Int
        var low: UInt8 = 0x80, high: UInt8 = 0xBF
        var value: UInt32
        switch lead {
        case 0xC2...0xDF: (count, value) = (1, UInt32(lead & 0x1F))
        case 0xE0: (count, value, low) = (2, UInt32(lead & 0x0F), 0xA0)
        case 0xE1...0xEC, 0xEE...0xEF: (count, value) = (2, UInt32(lead & 0x0F))
        case 0xED: (count, value, high) = (2, UInt32(lead & 0x0F), 0x9F)
        case 0xF0: (count, value, low) = (3, UInt32(lead & 0x07), 0x90)
        case 0xF1...0xF3: (count, value) = (3, UInt32(lead & 0x07))
        case 0xF4: (count, value, high) = (3, UInt32(lead & 0x07), 0x8F)
        default: throw notUTF8
        }
        for position in 0..<count {
            guard let byte = try nextByte() else { throw notUTF8 }
            guard position == 0 ? (low...high).contains(byte) : (0x80...0xBF).contains(byte) else { throw notUTF8 }
            value = value << 6 | UInt32(byte & 0x3F)
        }
        guard let scalar = Unicode.Scalar(value) else { throw notUTF8 }
        return scalar
    }
}
