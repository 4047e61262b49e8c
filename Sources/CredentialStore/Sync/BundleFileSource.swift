import CredentialStoreCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A bundle file, read piece by piece so that memory follows the largest chunk, never the file.
///
/// Only a regular file is read: a FIFO would block, and a device such as `/dev/zero` never ends.
/// The file is opened without blocking and checked with `fstat` before any byte is read.
final class BundleFileSource: BundleSource {
    private let descriptor: Int32
    private var peeked: UInt8?

    init(url: URL) throws {
        let descriptor = open(url.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CredentialStorageError(.notFound, "could not read the bundle \(url.path); check the path")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw CredentialStorageError(.invalidBundle, "\(url.path) is not a regular file, so it is not a bundle; nothing was read from it")
        }
        // Back to blocking reads, which a regular file never needs to wait for anyway.
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    func read(count: Int) throws -> [UInt8]? {
        guard count >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: count)
        var filled = 0
        if count > 0, let byte = peeked {
            buffer[0] = byte
            filled = 1
            peeked = nil
        }
        while filled < count {
            let got = buffer.withUnsafeMutableBytes { raw in
                Glibc.read(descriptor, raw.baseAddress! + filled, count - filled)
            }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { throw CredentialStorageError(.io, "reading the bundle failed: \(String(cString: strerror(errno)))") }
            if got == 0 { return nil }
            filled += got
        }
        return buffer
    }

    func isAtEnd() throws -> Bool {
        if peeked != nil { return false }
        guard let byte = try read(count: 1) else { return true }
        peeked = byte[0]
        return false
    }
}
