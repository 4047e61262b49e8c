import CredentialStoreCore
internal import CSodium

/// Key material in guarded memory.
///
/// `sodium_malloc` places the bytes on their own locked pages between guard pages, so they are
/// never swapped out and an overrun faults; the pages are made read-only once filled, and
/// `sodium_free` zeroes them on release.
package final class SecureBytes: @unchecked Sendable {
    // @unchecked: the buffer is written once in init, then made read-only by sodium_mprotect_readonly.
    package let count: Int
    private let pointer: UnsafeMutableRawPointer

    /// Allocates `count` bytes and lets `fill` write them once.
    package init(count: Int, fill: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        Sodium.ensureInitialized()
        guard let pointer = sodium_malloc(count) else {
            throw CredentialStorageError(.io, "could not allocate locked memory for key material")
        }
        self.count = count
        self.pointer = pointer
        // Every stored property is set: if `fill` throws, Swift runs deinit, which frees the
        // buffer (freeing it here as well was a double free: a keyring key longer than expected
        // crashed every command).
        try fill(UnsafeMutableRawBufferPointer(start: pointer, count: count))
        sodium_mprotect_readonly(pointer)
    }

    /// Fresh random bytes from the system's CSPRNG.
    package static func random(count: Int) throws -> SecureBytes {
        try SecureBytes(count: count) { randombytes_buf($0.baseAddress!, $0.count) }
    }

    /// A guarded copy of `bytes`.
    package convenience init(copying bytes: UnsafeRawBufferPointer) throws {
        try self.init(count: bytes.count) { $0.copyMemory(from: bytes) }
    }

    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Constant-time comparison, for commitments and MACs.
    package func constantTimeEquals(_ other: [UInt8]) -> Bool {
        guard other.count == count else { return false }
        return other.withUnsafeBytes { sodium_memcmp(pointer, $0.baseAddress!, count) == 0 }
    }

    deinit {
        sodium_free(pointer)
    }
}
