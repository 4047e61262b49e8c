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
        // 74, as for every input file (netrc import, import): a missing file is an I/O failure,
        // not "nothing matched".
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CommandFailure(.ioError, "cannot read \(path)")
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

    /// Where an export goes, opened before anything of the store is: a new file, or a descriptor
    /// the caller passed in.
    struct Destination {
        let path: String
        fileprivate let descriptor: Int32
        /// The file this command created, removed again if the export does not finish.
        fileprivate let created: Bool
    }

    /// Opens `path` for an export: a new file (0600, never over an existing file or through a
    /// symbolic link), or, for `/dev/fd/N`, a descriptor of the caller's.
    ///
    /// Call it before opening the store: a descriptor number is then one the caller passed in,
    /// never one of credstore's own (the database, its WAL, the rollback anchor), which a key
    /// written there would wreck and leave on disk. Standard input, output and error are refused:
    /// the key is never written where a terminal or a log would show it.
    static func openDestination(_ path: String) throws -> Destination {
        if path.hasPrefix("/dev/fd/") {
            guard let number = Int32(path.dropFirst("/dev/fd/".count)), number >= 3 else {
                throw CommandFailure(.usage, "\(path): only a descriptor of 3 or more that you opened for credstore is written to, never standard input, output or error")
            }
            let descriptor = fcntl(number, F_DUPFD_CLOEXEC, 3)
            guard descriptor >= 0 else {
                throw CommandFailure(.ioError, "cannot write \(path): no such open descriptor (\(String(cString: strerror(errno))))")
            }
            return Destination(path: path, descriptor: descriptor, created: false)
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            let reason = errno == EEXIST ? "it exists already; choose a new path" : String(cString: strerror(errno))
            throw CommandFailure(.ioError, "cannot write \(path): \(reason)")
        }
        // The umask may have taken bits away, never added them; fchmod makes it exactly 0600.
        fchmod(descriptor, 0o600)
        return Destination(path: path, descriptor: descriptor, created: true)
    }

    /// Opens every one of `paths` (``openDestination(_:)``), the descriptors the caller passed
    /// first: a file opened before them would take the lowest free number, and `/dev/fd/3` would
    /// then be that file. On a failure, what was opened is discarded.
    static func openDestinations(_ paths: [String]) throws -> [Destination] {
        let order = paths.indices.sorted { (paths[$0].hasPrefix("/dev/fd/") ? 0 : 1) < (paths[$1].hasPrefix("/dev/fd/") ? 0 : 1) }
        var opened: [Int: Destination] = [:]
        do {
            for index in order { opened[index] = try openDestination(paths[index]) }
        } catch {
            opened.values.forEach(discard)
            throw error
        }
        return paths.indices.map { opened[$0]! }
    }

    /// Writes `bytes` whole to `destination`; ``close(_:)`` or ``discard(_:)`` ends it.
    static func write(_ destination: Destination, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(destination.descriptor, $0.baseAddress!, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { throw CommandFailure(.ioError, "cannot write \(destination.path): \(String(cString: strerror(errno)))") }
            offset += written
        }
    }

    /// Closes `destination`, written.
    static func close(_ destination: Destination) {
        _ = Glibc.close(destination.descriptor)
    }

    /// Closes `destination` unfinished, removing the file this command created for it.
    static func discard(_ destination: Destination) {
        _ = Glibc.close(destination.descriptor)
        if destination.created { unlink(destination.path) }
    }

    /// Writes `bytes` to `path` (0600) through a new file beside it, `.NAME.PID.RANDOM.new`, renamed
    /// over what is there: a reader (curl) finds the old file or the new one, whole, never none or
    /// half of one, and two runs at once each put a whole file in place.
    static func replace(_ path: String, _ bytes: [UInt8]) throws {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).\(String(UInt64.random(in: .min ... .max), radix: 16)).new").path
        let destination = try openDestination(temporary)
        do {
            try write(destination, bytes)
            guard fsync(destination.descriptor) == 0 else { throw CommandFailure(.ioError, "cannot write \(path): \(String(cString: strerror(errno)))") }
        } catch {
            discard(destination)
            throw error
        }
        close(destination)
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw CommandFailure(.ioError, "cannot write \(path): \(reason)")
        }
    }

    /// The file whose temporary ``replace(_:_:)`` names `name`; nil when `name` is none.
    static func replacedFile(ofTemporary name: String) -> String? {
        guard name.hasPrefix("."), name.hasSuffix(".new") else { return nil }
        let parts = name.dropFirst().dropLast(".new".count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[parts.count - 2].allSatisfy({ $0.isASCII && $0.isNumber }), !parts[parts.count - 2].isEmpty,
              parts[parts.count - 1].allSatisfy(\.isHexDigit), !parts[parts.count - 1].isEmpty
        else { return nil }
        return parts.dropLast(2).joined(separator: ".")
    }

    /// Writes `bytes` to a new file at `path` (``openDestination(_:)``'s rules).
    static func writeNew(_ path: String, _ bytes: [UInt8]) throws {
        let destination = try openDestination(path)
        do { try write(destination, bytes) } catch {
            discard(destination)
            throw error
        }
        close(destination)
    }
}
