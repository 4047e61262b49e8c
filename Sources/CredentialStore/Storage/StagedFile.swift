import CredentialStoreCore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file made whole under a temporary name beside its final one, then put in place in one step:
/// linked (``publish()``), so that a name another process took first stays as it is, or renamed
/// over what is there (``replace()``). A reader of the final name sees nothing or the whole file.
///
/// The temporary is `.<final name>.<pid>.<random>.new` in the final name's folder (one file
/// system, so the link or the rename is atomic), created 0600 whatever the umask, and `flock`ed
/// while its creator works on it. A creator that dies leaves only its temporary (and SQLite's
/// `-wal` and `-shm` beside it, for a store); ``sweep(beside:)`` removes those that are over a
/// minute old and that no live creator holds, so a slow creator is never disturbed.
final class StagedFile {
    /// The temporary's path.
    let path: String
    /// Where the file goes.
    let finalPath: String
    /// Open and locked while the file is being made; -1 once it is in place or discarded.
    private var descriptor: Int32
    private var settled = false

    /// How old, in seconds, an unlocked temporary must be before a sweep takes it for abandoned.
    static let abandonedAfter: time_t = 60
    /// The files SQLite keeps beside a database, removed with a temporary store.
    private static let siblingSuffixes = ["-wal", "-shm", "-journal"]

    /// Creates an empty temporary for `finalPath`, locked until it is put in place or discarded.
    init(for finalPath: String) throws {
        let (folder, name) = Self.split(finalPath)
        self.finalPath = finalPath
        path = "\(folder)/.\(name).\(getpid()).\(String(UInt64.random(in: .min ... .max), radix: 16)).new"
        let file = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard file >= 0 else {
            throw CredentialStorageError(.io, "could not create a file beside \(finalPath): \(String(cString: strerror(errno)))")
        }
        // The umask may have taken bits away, never added them; fchmod makes it exactly 0600.
        fchmod(file, 0o600)
        // A sweep leaves a locked temporary alone, however old it is.
        _ = flock(file, LOCK_EX | LOCK_NB)
        descriptor = file
    }

    deinit {
        if !settled { discard() }
    }

    /// Writes `bytes` whole and makes them durable.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let written = writeBytes(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { throw failure("write") }
            offset += written
        }
        try sync()
    }

    /// Makes what was written to the temporary (by this process or by SQLite) durable.
    func sync() throws {
        guard fsync(descriptor) == 0 else { throw failure("write") }
    }

    /// Links the file at its final name unless something is there already; false then. The
    /// temporary is gone either way.
    func publish() throws -> Bool {
        let result = try settle { link(path, finalPath) == 0 ? true : errno == EEXIST ? false : nil }
        unlink(path)
        return result
    }

    /// Renames the file over whatever is at its final name.
    func replace() throws {
        _ = try settle { rename(path, finalPath) == 0 ? true : nil }
    }

    /// Removes the temporary, and what SQLite left beside it.
    func discard() {
        closeDescriptor()
        settled = true
        for suffix in [""] + Self.siblingSuffixes { unlink(path + suffix) }
    }

    /// Closes the temporary and puts it in place with `step` (true: done; false: the final name
    /// is taken; nil: failed, errno says why), then makes the folder's new entry durable.
    private func settle(_ step: () -> Bool?) throws -> Bool {
        // Marked fresh, so that no sweep takes it for abandoned in the moment before `step`; and
        // closed first: once it is the store, closing a descriptor of it would drop this process's
        // SQLite locks on it (POSIX locks belong to the process, and any close releases them all).
        futimens(descriptor, nil)
        closeDescriptor()
        settled = true
        guard let done = step() else {
            let error = failure("put in place")
            unlink(path)
            throw error
        }
        if done { Self.syncFolder(of: finalPath) }
        return done
    }

    private func closeDescriptor() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }

    private func failure(_ what: String) -> CredentialStorageError {
        CredentialStorageError(.io, "could not \(what) \(finalPath): \(String(cString: strerror(errno)))")
    }

    // MARK: Abandoned temporaries

    /// Removes the temporaries of `finalPath` that a creator abandoned: over a minute old and
    /// not locked by a live one. Best effort; nothing else in the folder is touched.
    static func sweep(beside finalPath: String) {
        let (folder, name) = split(finalPath)
        let prefix = ".\(name)."
        guard let directory = opendir(folder) else { return }
        var names: [String] = []
        while let entry = readdir(directory) {
            // Read in place, up to its NUL: a record is only as long as its name, so copying the
            // whole 256-byte d_name field reads past the end of the last record in the buffer.
            let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
            let entryName = String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self))
            if entryName.hasPrefix(prefix) { names.append(entryName) }
        }
        closedir(directory)
        let present = Set(names)
        let now = time(nil)
        func abandoned(_ path: String) -> stat? {
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, now - info.st_mtim.tv_sec > abandonedAfter else { return nil }
            return info
        }
        for entryName in names {
            guard let base = temporaryName(entryName, prefix: prefix) else { continue }
            let path = "\(folder)/\(entryName)"
            if base != entryName {
                // SQLite's file beside a temporary store that is gone: its creator is gone too.
                if !present.contains(base), abandoned(path) != nil { unlink(path) }
                continue
            }
            guard let info = abandoned(path) else { continue }
            // A second name: the creator put it in place and died before removing this one.
            // Only the name goes (opening it could be opening a live store, see `settle`).
            if info.st_nlink > 1 {
                unlink(path)
                continue
            }
            let file = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            guard file >= 0 else { continue }
            if flock(file, LOCK_EX | LOCK_NB) == 0 {
                for suffix in [""] + siblingSuffixes { unlink(path + suffix) }
            }
            close(file)
        }
    }

    /// The temporary `entry` is or belongs to (`entry` itself, or the name without SQLite's
    /// suffix); nil when `entry` is no temporary of this kind.
    static func temporaryName(_ entry: String, prefix: String) -> String? {
        guard entry.hasPrefix(prefix) else { return nil }
        var base = Substring(entry)
        for suffix in siblingSuffixes where base.hasSuffix(suffix) {
            base = base.dropLast(suffix.count)
            break
        }
        guard base.hasSuffix(".new") else { return nil }
        let parts = base.dropFirst(prefix.count).dropLast(".new".count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].allSatisfy({ $0.isASCII && $0.isNumber }),
              !parts[1].isEmpty, parts[1].allSatisfy(\.isHexDigit)
        else { return nil }
        return String(base)
    }

    /// Makes the entries of `path`'s folder durable (a link or rename just made there).
    static func syncFolder(of path: String) {
        let folder = open(split(path).folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { return }
        fsync(folder)
        close(folder)
    }

    static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let folder = path[..<slash]
        return (folder.isEmpty ? "/" : String(folder), String(path[path.index(after: slash)...]))
    }
}

/// write(2), out of reach of ``StagedFile/write(_:)``'s name.
private func writeBytes(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
