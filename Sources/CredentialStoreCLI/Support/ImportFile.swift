package import CredentialStoreFormats
import Foundation
#if canImport(Glibc)
// `struct stat` is CoreFoundation's declaration once swift-nio's modules are in the build: the
// member-import check wants the module that declares it.
import CoreFoundation
import Glibc
#endif

/// A file an import reads more than once: to check it whole before anything is written, to
/// write it, and to report on it. Each pass streams it from the start, so that no pass holds the
/// file; a pipe, which cannot be read twice, is read into memory once, up to
/// ``maximumPipedBytes``.
package final class ImportFile: ScalarStreamOwner {
    /// The most a pipe or other stream that is not a regular file may hold.
    static let maximumPipedBytes = 8 << 20

    package let path: String
    private let descriptor: Int32
    /// A pipe's bytes; nil for a regular file, read from its descriptor on each pass.
    private let piped: [UInt8]?
    /// What a regular file was when opened: a pass that finds it otherwise refuses to go on.
    private let identity: Identity?
    /// The bytes of the pass under way, hashed (two differently seeded hashes, 128 bits): a
    /// change that keeps the size and the modification time (a restored timestamp, a write
    /// through a shared memory map) still shows.
    private var passHashers = (Hasher(), Hasher())
    /// The hashes of the first whole pass, which every later pass must see again.
    private var firstPass: (Int, Int)?

    private struct Identity: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: timespec

        static func == (left: Identity, right: Identity) -> Bool {
            (left.device, left.inode, left.size, left.modified.tv_sec, left.modified.tv_nsec)
                == (right.device, right.inode, right.size, right.modified.tv_sec, right.modified.tv_nsec)
        }
    }

    /// Opens `path`.
    ///
    /// - Throws: an I/O error (74) when it cannot be opened or read, a data error (65) for a
    ///   pipe over ``maximumPipedBytes``.
    package init(path: String) throws {
        self.path = path
        // Non-blocking to open: a FIFO with no writer would hold open() forever. Reads block
        // again (a writer that keeps a FIFO open and silent holds the import, as it would `cat`).
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw CommandFailure(.ioError, "could not read \(path); check its path and permissions")
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        self.descriptor = descriptor
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            close(descriptor)
            throw CommandFailure(.ioError, "could not read \(path); check its path and permissions")
        }
        if (info.st_mode & S_IFMT) == S_IFREG {
            identity = Self.identity(info)
            piped = nil
            return
        }
        identity = nil
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else {
                close(descriptor)
                throw CommandFailure(.ioError, "could not read \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes += chunk[..<count]
            guard bytes.count <= Self.maximumPipedBytes else {
                close(descriptor)
                throw CommandFailure(.dataError, "\(path) is not a regular file and holds more than \(Self.maximumPipedBytes >> 20) MiB, which an import does not hold in memory; save it to a file and import that (nothing was imported)")
            }
        }
        piped = bytes
    }

    deinit {
        close(descriptor)
    }

    /// Whether the input is a file a user could delete once imported: a regular file, not named
    /// through /dev or /proc (`/dev/stdin` redirected from a file is one, and its name is a link).
    var isDeletable: Bool {
        piped == nil && !path.hasPrefix("/dev/") && !path.hasPrefix("/proc/")
    }

    private static func identity(_ info: stat) -> Identity {
        Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size), modified: info.st_mtim)
    }

    /// The file's scalars from its start: a pass, which ends with ``endPass()``.
    package func scalars() throws -> ScalarStream {
        if let piped { return ScalarStream(bytes: piped, name: path) }
        try checkUnchanged()
        passHashers = (Hasher(), Hasher())
        passHashers.0.combine(0 as UInt8)
        passHashers.1.combine(1 as UInt8)
        guard lseek(descriptor, 0, SEEK_SET) == 0 else {
            throw CommandFailure(.ioError, "could not read \(path) again from its start; nothing was imported")
        }
        return ScalarStream(descriptor: descriptor, name: path, owner: self)
    }

    /// The whole file as text, for a format read whole (netrc); a data error (65) when it is
    /// longer than `maximumBytes`, found without reading further.
    package func text(maximumBytes: Int, format: String) throws -> String {
        var scalars = try scalars()
        var text = String.UnicodeScalarView()
        var count = 0
        while let scalar = try scalars.nextScalar() {
            count += UTF8.width(scalar)
            guard count <= maximumBytes else {
                throw CommandFailure(.dataError, "\(path) is longer than \(maximumBytes >> 20) MiB, more than any \(format) holds; nothing was imported")
            }
            text.append(scalar)
        }
        try endPass()
        return String(text)
    }

    package func didRead(_ chunk: UnsafeRawBufferPointer) {
        passHashers.0.combine(bytes: chunk)
        passHashers.1.combine(bytes: chunk)
    }

    /// Ends a pass that read the file to its end: throws a data error (65) when the file was
    /// written since it was opened, or its bytes are not those the first pass read.
    package func endPass() throws {
        try checkUnchanged()
        guard piped == nil else { return }
        let digest = (passHashers.0.finalize(), passHashers.1.finalize())
        guard let firstPass else {
            firstPass = digest
            return
        }
        guard firstPass == digest else { throw changed }
    }

    private var changed: CommandFailure {
        CommandFailure(.dataError, "\(path) changed while it was read; nothing was imported from it, so run the import again once it is written")
    }

    /// Throws a data error (65) when the file is not the one opened, or was written since.
    package func checkUnchanged() throws {
        guard let identity else { return }
        var info = stat()
        guard fstat(descriptor, &info) == 0, Self.identity(info) == identity else { throw changed }
    }
}
