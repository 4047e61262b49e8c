import CredentialStore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The files the TLS commands read and write: certificates and keys in, PEM out.
enum TLSFiles {
    /// The largest certificate or PKCS #12 file read: far more than any chain, and no more
    /// memory than a mistyped path to a disk image can cost.
    static let largest = 1 << 20

    static func read(_ path: String) throws -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CommandFailure(.notFound, "cannot read \(path)")
        }
        defer { try? handle.close() }
        let data = try handle.read(upToCount: largest + 1) ?? Data()
        guard data.count <= largest else { throw CommandFailure(.dataError, "\(path) is larger than a certificate file can be") }
        return [UInt8](data)
    }

    /// Whether `contents` is PEM text (`-----BEGIN`) rather than a binary PKCS #12 bundle.
    static func isPEM(_ contents: [UInt8]) -> Bool {
        contents.firstRange(of: Array("-----BEGIN ".utf8)) != nil
    }

    /// Writes `bytes` to a new file at `path`, 0600, never over an existing file or through a
    /// symbolic link; or, for `/dev/fd/N`, to that open descriptor.
    static func writeNew(_ path: String, _ bytes: [UInt8]) throws {
        let descriptor: Int32
        if path.hasPrefix("/dev/fd/"), let number = Int32(path.dropFirst("/dev/fd/".count)), number >= 0 {
            descriptor = dup(number)
        } else {
            descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        }
        guard descriptor >= 0 else {
            let reason = errno == EEXIST ? "it exists already; choose a new path" : String(cString: strerror(errno))
            throw CommandFailure(.ioError, "cannot write \(path): \(reason)")
        }
        defer { close(descriptor) }
        // The umask may have taken bits away, never added them; fchmod makes it exactly 0600.
        if !path.hasPrefix("/dev/fd/") { fchmod(descriptor, 0o600) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { throw CommandFailure(.ioError, "cannot write \(path): \(String(cString: strerror(errno)))") }
            offset += written
        }
    }
}
