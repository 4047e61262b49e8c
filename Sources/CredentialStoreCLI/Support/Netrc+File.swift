import CredentialStoreFormats
import Foundation
#if canImport(Glibc)
// `struct stat` is CoreFoundation's declaration once swift-nio's modules are in the build: the
// member-import check wants the module that declares it.
import CoreFoundation
import Glibc
#endif

extension Netrc {
    /// Writes `text` to `path` as a new 0600 file renamed over the old one, so that no reader
    /// ever sees half a file or a moment of wider permissions.
    ///
    /// - Throws: an I/O error (74) when `path` is a symbolic link (writing through it would put
    ///   passwords wherever it points) or the folder cannot be written.
    static func write(_ text: String, to path: String) throws {
        var info = stat()
        if lstat(path, &info) == 0 {
            if (info.st_mode & S_IFMT) == S_IFLNK {
                throw CommandFailure(.ioError, "\(Describe.cell(path)) is a symbolic link; netrc export does not write through links, give the real path")
            }
            // The rename below replaces whatever is at the path: a device (/dev/null, as root), a
            // FIFO another program reads, would become a file of passwords.
            if (info.st_mode & S_IFMT) != S_IFREG {
                throw CommandFailure(.ioError, "\(Describe.cell(path)) is not a regular file; netrc export replaces only a regular file, give another path")
            }
        }
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw CommandFailure(.ioError, "could not create a file beside \(Describe.cell(path)): \(String(cString: strerror(errno))); check the folder exists and is writable")
        }
        var renamed = false
        defer {
            if !renamed { unlink(temporary) }
        }
        var bytes = Array(text.utf8)
        defer { for index in bytes.indices { bytes[index] = 0 } }
        var offset = 0
        var failed = fchmod(descriptor, 0o600) != 0
        while !failed, offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
            if written < 0, errno == EINTR { continue }
            if written <= 0 { failed = true } else { offset += written }
        }
        if !failed { failed = fsync(descriptor) != 0 }
        close(descriptor)
        guard !failed, rename(temporary, path) == 0 else {
            throw CommandFailure(.ioError, "could not write \(Describe.cell(path)): \(String(cString: strerror(errno))); nothing was changed")
        }
        renamed = true
    }
}
