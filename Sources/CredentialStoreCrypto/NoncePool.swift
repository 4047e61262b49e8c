#if canImport(Glibc)
import CredentialStoreCore
import Glibc
#endif
internal import CSodium

/// Random bytes for nonces, drawn from the kernel a page at a time.
///
/// Every sealed field takes a fresh random 24-byte XChaCha20 nonce. Drawn one by one, each costs a
/// getrandom(2) system call: four for a `set`, half a million for the import of 100,000 items,
/// where they took a tenth of the time. The pool draws 4 KiB at once and hands the bytes out in
/// order, each once, erasing them from the pool as they go.
///
/// Nonces are public (each is stored beside its ciphertext), so holding them ahead of use reveals
/// nothing; what must never happen is handing the same bytes out twice:
/// - across threads, a mutex guards the pool;
/// - across fork(2), the page that holds the pool, its count and its mutex is `MADV_WIPEONFORK`:
///   a child process finds it all zero, which is an empty pool and an unlocked mutex, and draws its
///   own bytes, even if another thread of the parent held the lock when it forked. Where the kernel
///   refuses that (before Linux 4.14), there is no pool, and every nonce is drawn on its own.
package enum NoncePool {
    /// The pool's page: the mutex, the count of unused bytes, then the bytes, of which the last
    /// `remaining` are unused.
    private struct Page: @unchecked Sendable {
        package let base: UnsafeMutableRawPointer
        package var mutex: UnsafeMutablePointer<pthread_mutex_t> { base.assumingMemoryBound(to: pthread_mutex_t.self) }
        package var remaining: UnsafeMutablePointer<Int> { (base + NoncePool.countOffset).assumingMemoryBound(to: Int.self) }
        package var bytes: UnsafeMutableRawPointer { base + NoncePool.bytesOffset }
    }

    private static let pageSize = 4096
    private static let countOffset = (MemoryLayout<pthread_mutex_t>.stride + 15) / 16 * 16
    private static let bytesOffset = countOffset + 16
    /// A whole number of nonces.
    private static let capacity = (pageSize - bytesOffset) / 24 * 24

    private static let page: Page? = makePage()

    private static func makePage() -> Page? {
        #if os(Linux)
        guard let base = mmap(nil, pageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              base != MAP_FAILED
        else { return nil }
        guard madvise(base, pageSize, MADV_WIPEONFORK) == 0 else {
            munmap(base, pageSize)
            return nil
        }
        // All zero, as mmap leaves it and a fork makes it again: glibc's default mutex, unlocked.
        let page = Page(base: base)
        pthread_mutex_init(page.mutex, nil)
        return page
        #else
        return nil
        #endif
    }

    /// Fills `count` bytes at `destination` with random bytes no other call receives.
    package static func fill(_ destination: UnsafeMutableRawPointer, count: Int) {
        guard count <= capacity, let page else { return randombytes_buf(destination, count) }
        pthread_mutex_lock(page.mutex)
        defer { pthread_mutex_unlock(page.mutex) }
        if page.remaining.pointee < count {
            randombytes_buf(page.bytes, capacity)
            page.remaining.pointee = capacity
        }
        let start = page.bytes + (capacity - page.remaining.pointee)
        destination.copyMemory(from: start, byteCount: count)
        sodium_memzero(start, count)
        page.remaining.pointee -= count
    }
}
