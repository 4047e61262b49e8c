#if canImport(Glibc)
import Glibc
#endif
import Synchronization
internal import CSodium

/// Random bytes for nonces, drawn from the kernel a page at a time.
///
/// Every sealed field takes a fresh random 24-byte XChaCha20 nonce. Drawn one by one, each costs a
/// getrandom(2) system call: four for a `set`, half a million for the import of 100,000 items,
/// where they took a tenth of the time. The pool draws 4 KiB at once and hands the bytes out in order, each
/// once, erasing them from the pool as they go.
///
/// Nonces are public (each is stored beside its ciphertext), so holding them ahead of use reveals
/// nothing; what must never happen is handing the same bytes out twice:
/// - across threads, a mutex guards the pool;
/// - across fork(2), the pool's page is `MADV_WIPEONFORK`: a child process finds it empty and draws
///   its own. Where the kernel refuses that (before Linux 4.14), there is no pool, and every nonce
///   is drawn on its own as before.
enum NoncePool {
    /// The pool's page: the count of unused bytes, then the bytes, of which the last `remaining`
    /// are unused. All zero, as a fork leaves it, means empty.
    private struct Page: @unchecked Sendable {
        let base: UnsafeMutableRawPointer
    }

    private static let pageSize = 4096
    private static let headerSize = MemoryLayout<Int>.stride
    /// A whole number of nonces.
    private static let capacity = (pageSize - headerSize) / 24 * 24

    private static let page = Mutex<Page?>(makePage())

    private static func makePage() -> Page? {
        #if os(Linux)
        guard let base = mmap(nil, pageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              base != MAP_FAILED
        else { return nil }
        guard madvise(base, pageSize, MADV_WIPEONFORK) == 0 else {
            munmap(base, pageSize)
            return nil
        }
        return Page(base: base)
        #else
        return nil
        #endif
    }

    /// Fills `count` bytes at `destination` with random bytes no other call receives.
    static func fill(_ destination: UnsafeMutableRawPointer, count: Int) {
        guard count <= capacity else { return randombytes_buf(destination, count) }
        page.withLock { page in
            guard let base = page?.base else { return randombytes_buf(destination, count) }
            var remaining = base.load(as: Int.self)
            if remaining < count {
                randombytes_buf(base + headerSize, capacity)
                remaining = capacity
            }
            let start = base + headerSize + (capacity - remaining)
            destination.copyMemory(from: start, byteCount: count)
            sodium_memzero(start, count)
            base.storeBytes(of: remaining - count, as: Int.self)
        }
    }
}
