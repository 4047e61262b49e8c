import CredentialStoreCore
import Foundation

/// A keyed BLAKE2b digest that stands for a value in a table key, so rows can be found without
/// the plaintext being stored: a space index, a user index, an origin index or a trusted-key
/// index (``StoreKeyring/IndexLabel`` keeps the four apart).
///
/// Its own type so that an index is never mistaken for a ciphertext, a key or another index's
/// bytes; the SQLite layer converts to and from bytes at its boundary. The wrapper is the array
/// itself: making one, comparing or hashing it allocates nothing.
@frozen
package struct BlindIndex: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The digest, ``StoreKeyring/indexBytes`` long for an index the keyring made; a row read
    /// from disk may hold anything, which then simply matches nothing.
    package let bytes: [UInt8]

    @inlinable
    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    // Written out and inlinable, not synthesized: the layers above hash and compare indexes in
    // their sets, dictionaries and sorts, and a conformance called across modules is not inlined.
    @inlinable
    package static func == (first: BlindIndex, second: BlindIndex) -> Bool {
        first.bytes == second.bytes
    }

    @inlinable
    package func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    /// SQLite's order for BLOB keys: bytewise, a prefix first (memcmp, then length). Writes in this
    /// order append to the B-trees rather than splitting pages all over them.
    @inlinable
    package static func < (first: BlindIndex, second: BlindIndex) -> Bool {
        let common = min(first.bytes.count, second.bytes.count)
        let order = common == 0 ? 0 : first.bytes.withUnsafeBytes { a in
            second.bytes.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, common) }
        }
        return order != 0 ? order < 0 : first.bytes.count < second.bytes.count
    }

    /// The first bytes in hex, for a debugger or a log: never the value it stands for.
    package var description: String {
        "index " + bytes.prefix(4).map { String(($0 >> 4) & 0xF, radix: 16) + String($0 & 0xF, radix: 16) }.joined() + "…"
    }
}
