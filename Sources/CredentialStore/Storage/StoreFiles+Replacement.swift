import CredentialStoreCore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole database files put in place (through a ``StagedFile``): a backup renamed to where it
/// was asked for, a restored store renamed over the one it replaces.
extension StoreFiles {
    /// The journal files SQLite keeps beside a database.
    static let journalSuffixes = ["-wal", "-shm", "-journal"]

    /// `invalidInput` when `url` names one of the store's own files (the database or its journal
    /// files, by any spelling, whether they exist now or not) or a file of its state folder (the
    /// rollback anchors): a backup renamed there would destroy the store it copies, and a restore
    /// from there would replace the very file it reads. `remedy` ends the message.
    static func refuseStoreFile(_ url: URL, database: String, stateFolder: URL?, remedy: String) throws {
        let own = [database] + journalSuffixes.map { database + $0 }
        let named = canonicalPath(url.path)
        if let path = own.first(where: { canonicalPath($0) == named }) {
            throw CredentialStorageError(.invalidInput, "\(url.path) is the store's own file \(path); \(remedy)")
        }
        if let stateFolder, named.hasPrefix(canonicalPath(stateFolder.path) + "/") {
            throw CredentialStorageError(.invalidInput, "\(url.path) is in the store's state folder \(stateFolder.path), beside its rollback anchors; \(remedy)")
        }
        var target = stat()
        guard lstat(url.path, &target) == 0 else { return }
        for path in own {
            var info = stat()
            if lstat(path, &info) == 0, info.st_dev == target.st_dev, info.st_ino == target.st_ino {
                throw CredentialStorageError(.invalidInput, "\(url.path) is the store's own file \(path); \(remedy)")
            }
        }
    }

    /// `path` with its folder's real path (symbolic links and `..` resolved), so two spellings of
    /// one file compare equal even when the file itself does not exist yet.
    static func canonicalPath(_ path: String) -> String {
        let url = URL(fileURLWithPath: path, isDirectory: false)
        let folder = url.deletingLastPathComponent().path
        guard let resolved = realpath(folder, nil) else { return url.standardizedFileURL.path }
        defer { free(resolved) }
        let base = String(cString: resolved)
        return (base == "/" ? "" : base) + "/" + url.lastPathComponent
    }

    /// `io` unless `url` is a regular file or nothing: a rename would put a file in the place of a
    /// device, a folder or a FIFO another program reads.
    static func requireReplaceable(_ url: URL) throws {
        var info = stat()
        if lstat(url.path, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG, (info.st_mode & S_IFMT) != S_IFLNK {
            throw CredentialStorageError(.io, "\(url.path) is not a regular file; only a regular file is replaced")
        }
    }

    /// Copies the file at `source` (anyone's, any mode: a backup may come from elsewhere) into
    /// the empty file at `destination` (a ``StagedFile``'s), which the caller then syncs.
    static func copyFile(_ source: URL, into destination: String) throws {
        // Without blocking: a FIFO would wait for a writer forever. The check below refuses it.
        let input = open(source.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard input >= 0 else {
            let reason = String(cString: strerror(errno))
            throw CredentialStorageError(errno == ENOENT ? .notFound : .io, "could not open \(source.path): \(reason)")
        }
        defer { close(input) }
        var info = stat()
        guard fstat(input, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw CredentialStorageError(.invalidInput, "\(source.path) is not a regular file")
        }
        _ = fcntl(input, F_SETFL, fcntl(input, F_GETFL) & ~O_NONBLOCK)
        let output = open(destination, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard output >= 0 else {
            throw CredentialStorageError(.io, "could not open \(destination): \(String(cString: strerror(errno)))")
        }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw CredentialStorageError(.io, "could not read \(source.path): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            var written = 0
            while written < count {
                let step = buffer.withUnsafeBytes { write(output, $0.baseAddress! + written, count - written) }
                if step < 0, errno == EINTR { continue }
                guard step > 0 else { throw CredentialStorageError(.io, "could not write \(destination): \(String(cString: strerror(errno)))") }
                written += step
            }
        }
    }
}
