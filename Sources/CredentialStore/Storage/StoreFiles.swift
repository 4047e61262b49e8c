import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The store's files on disk: a 0700 folder, 0600 files created under any umask, and refusal of
/// files that others could read, that are symbolic links, or that another user owns.
enum StoreFiles {
    /// Makes `directory` (and missing parents) with mode 0700. An existing `directory` must be
    /// owned by the calling user or root (its parents, which may be anyone's, are not checked).
    static func ensureDirectory(_ directory: URL, checkingOwner: Bool = true) throws {
        // stat(2) itself: FileManager's first use costs `credstore get` more than this whole check.
        var info = stat()
        if stat(directory.path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw CredentialStorageError(.io, "\(directory.path) is not a folder; choose another store path")
            }
            if checkingOwner { try checkOwner(info, of: directory.path, what: "the folder") }
            return
        }
        try ensureDirectory(directory.deletingLastPathComponent(), checkingOwner: false)
        if mkdir(directory.path, 0o700) != 0, errno != EEXIST {
            throw CredentialStorageError(.io, "could not create the folder \(directory.path): \(String(cString: strerror(errno)))")
        }
        // mkdir's mode is filtered by the umask; make sure no one else can even list the folder.
        chmod(directory.path, 0o700)
    }

    /// Whether `path` exists; throws `permissionsTooOpen` for a symbolic link, a non-regular file,
    /// or a file that group or others may read or write.
    static func checkExisting(_ path: String) throws -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return false }
            throw CredentialStorageError(.io, "could not inspect \(path): \(String(cString: strerror(errno)))")
        }
        let type = info.st_mode & S_IFMT
        if type == S_IFLNK {
            throw CredentialStorageError(.permissionsTooOpen, "\(path) is a symbolic link; credstore opens only the real file, so point the store path at it")
        }
        guard type == S_IFREG else {
            throw CredentialStorageError(.permissionsTooOpen, "\(path) is not a regular file")
        }
        try checkOwner(info, of: path, what: "")
        if info.st_mode & 0o077 != 0 {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw CredentialStorageError(.permissionsTooOpen, "\(path) has mode \(mode), so others can read it; run `chmod 600 \(path)` if no one else did, then retry")
        }
        return true
    }

    /// `permissionsTooOpen` unless `info` (of `path`) is owned by the calling user or by root.
    ///
    /// Mode 0600 protects nothing when the file is someone else's: in a folder others can write
    /// to, another user can create a store and key file of their own, which this user would then
    /// fill with secrets. Root's files are accepted (root can read everything anyway); when the
    /// caller is root, a file of any other user is refused like any other.
    static func checkOwner(_ info: stat, of path: String, what: String) throws {
        let caller = geteuid()
        guard info.st_uid != caller, info.st_uid != 0 else { return }
        throw CredentialStorageError(.permissionsTooOpen,
            "\(what.isEmpty ? "" : what + " ")\(path) is owned by \(describeUser(info.st_uid)), not by you (\(describeUser(caller))) or root: another user could have put it there, so credstore does not use it; if it is yours, `chown` it, else move it away")
    }

    /// "uid N (name)", or "uid N" when `/etc/passwd` does not name it.
    ///
    /// Read from the file, not through `getpwuid_r`: in the static `credstore` that would load
    /// glibc's NSS modules at run time, which must then match the glibc it was linked with. A
    /// user known only to a directory service is named by uid alone, which identifies it as well.
    static func describeUser(_ uid: uid_t) -> String {
        guard let passwd = FileManager.default.contents(atPath: "/etc/passwd") else { return "uid \(uid)" }
        for line in passwd.split(separator: UInt8(ascii: "\n")) {
            // name:password:uid:gid:gecos:home:shell
            let fields = line.split(separator: UInt8(ascii: ":"), maxSplits: 3, omittingEmptySubsequences: false)
            guard fields.count == 4, UInt32(String(decoding: fields[2], as: UTF8.self)) == uid, !fields[0].isEmpty else { continue }
            return "uid \(uid) (\(FieldRules.displayEscaped(String(decoding: fields[0], as: UTF8.self))))"
        }
        return "uid \(uid)"
    }

    /// The size of the file at `path` in bytes, with its WAL's; 0 when neither is there.
    static func size(of path: String) -> Int64 {
        var total: Int64 = 0
        for file in [path, path + "-wal"] {
            var info = stat()
            if stat(file, &info) == 0 { total += Int64(info.st_size) }
        }
        return total
    }

    /// Checks the database and whatever journal files SQLite left beside it; whether the
    /// database is there.
    static func checkStoreFiles(database path: String) throws -> Bool {
        for suffix in ["-wal", "-shm", "-journal"] {
            _ = try checkExisting(path + suffix)
        }
        return try checkExisting(path)
    }

    /// Whether the file at `path` is there and holds no byte.
    static func isEmptyFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_size == 0
    }

    /// `corrupt` when the database at `path` is an empty file. A store is created whole under
    /// another name and linked into place (``StoreCreation``), so an empty file there is never a
    /// store being made: it is one that lost its contents, or a file that never was a store.
    static func refuseEmptyDatabase(_ path: String) throws {
        guard isEmptyFile(path) else { return }
        throw CredentialStorageError(.corrupt,
            "the store's database \(path) is empty: credstore creates a store whole, so this one lost its contents (or never was a store); restore it from a backup, or delete the empty file to start a new store")
    }

    /// `corrupt` when there is no database at `path` but a WAL with pages in it: the WAL of a
    /// store whose database went, which SQLite would replay onto a new store put at the path.
    static func refuseOrphanedLog(_ path: String) throws {
        var info = stat()
        guard lstat(path + "-wal", &info) == 0, info.st_size > 0 else { return }
        throw CredentialStorageError(.corrupt,
            "the store's database \(path) is missing, but its WAL is not: credstore creates a store whole, so the database was deleted or lost; restore it from a backup, or delete \(path)-wal to start a new store")
    }

    /// Runs `body` holding a lock on `folder`: exclusive while a new store is put in place and
    /// recorded, shared while an open reads that record again, so that the open never sees the
    /// new store beside the old record. Without a folder to lock, `body` runs all the same.
    static func withFolderLock<T>(_ folder: String, exclusive: Bool, _ body: () throws -> T) rethrows -> T {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { if descriptor >= 0 { close(descriptor) } }
        if descriptor >= 0 {
            while flock(descriptor, exclusive ? LOCK_EX : LOCK_SH) != 0, errno == EINTR {}
        }
        return try body()
    }

    /// Creates `path` 0600 (whatever the umask), failing if anything, even a dangling link, is there.
    /// SQLite gives its WAL and shared-memory files the mode of the database, so they are 0600 too.
    @discardableResult
    static func createExclusive(_ path: String, contents: UnsafeRawBufferPointer? = nil) throws -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { return false }
            throw CredentialStorageError(.io, "could not create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        fchmod(fd, 0o600)
        if let contents, contents.count > 0 {
            guard write(fd, contents.baseAddress, contents.count) == contents.count, fsync(fd) == 0 else {
                unlink(path)
                throw CredentialStorageError(.io, "could not write \(path): \(String(cString: strerror(errno)))")
            }
        }
        return true
    }

    /// Writes `bytes` to `url` (0600) through a temporary file and a rename, so a reader never
    /// sees half a file and a crash leaves the old one (and a temporary that the next write of
    /// `url` removes, see ``StagedFile``).
    ///
    /// Only a regular file (or nothing) is replaced: the rename would put the file in place of a
    /// device (`/dev/null`, for root) or a FIFO another program reads.
    static func writeAtomically(_ url: URL, bytes: [UInt8]) throws {
        var info = stat()
        if lstat(url.path, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG, (info.st_mode & S_IFMT) != S_IFLNK {
            throw CredentialStorageError(.io, "\(url.path) is not a regular file; only a regular file is replaced")
        }
        StagedFile.sweep(beside: url.path)
        let staged = try StagedFile(for: url.path)
        try bytes.withUnsafeBytes { try staged.write($0) }
        try staged.replace()
    }

    /// Puts `contents` at `url` whole (0600), unless a file is there already: false then, and
    /// that file stays as it is. Written under a temporary name and linked into place, so that
    /// another process sees no file or all of it, and two processes never overwrite each other.
    static func linkNew(_ url: URL, contents: [UInt8]) throws -> Bool {
        StagedFile.sweep(beside: url.path)
        let staged = try StagedFile(for: url.path)
        try contents.withUnsafeBytes { try staged.write($0) }
        return try staged.publish()
    }

    // MARK: Key files

    /// "CSKEY", a zero byte and the format version; then the 32 key bytes (version 1), or the key
    /// sealed by systemd-creds, its base64 text (version 2).
    private static let keyFileMagic: [UInt8] = [0x43, 0x53, 0x4B, 0x45, 0x59, 0x00, 0x00, 0x01]
    private static let sealedKeyFileMagic: [UInt8] = [0x43, 0x53, 0x4B, 0x45, 0x59, 0x00, 0x00, 0x02]
    private static let keyBytes = 32
    private static let keyFileLength = 8 + keyBytes
    /// A sealed key is a few hundred bytes of base64; anything near this is not one.
    private static let sealedKeyFileLimit = 16 * 1024

    /// Reads a key file into guarded memory, unsealing it with systemd-creds if it is sealed.
    static func readKeyFile(_ url: URL, sealer: SystemdCreds = .system) throws -> SecureBytes {
        guard try checkExisting(url.path) else {
            throw CredentialStorageError(.notFound, "the key file \(url.path) does not exist; pass the key file this store was created with")
        }
        // Its folder too: whoever owns it can swap the key file for one of their own.
        var folderInfo = stat()
        let folder = url.deletingLastPathComponent().path
        if stat(folder, &folderInfo) == 0 { try checkOwner(folderInfo, of: folder, what: "the folder") }
        let fd = open(url.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            throw CredentialStorageError(.io, "could not open the key file \(url.path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        // One byte more than the longest key file, to notice a file that is too long.
        return try withUnsafeTemporaryAllocation(byteCount: sealedKeyFileLimit + 1, alignment: 16) { buffer in
            defer { Sodium.zero(buffer) }
            var total = 0
            while total < buffer.count {
                let count = read(fd, buffer.baseAddress! + total, buffer.count - total)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                total += count
            }
            let magic = total >= 8 ? Array(buffer[0..<8]) : []
            if magic == keyFileMagic, total == keyFileLength {
                return try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: buffer[8..<keyFileLength]))
            }
            if magic == sealedKeyFileMagic, total <= sealedKeyFileLimit {
                return try sealer.unseal(Array(buffer[8..<total]), keyBytes: keyBytes)
            }
            throw CredentialStorageError(.wrongKey, "\(url.path) is not a credstore key file")
        }
    }

    /// Whether the key file at `path` is sealed by systemd-creds; nil when it cannot be read.
    static func isSealedKeyFile(_ path: String) -> Bool? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var magic = [UInt8](repeating: 0, count: 8)
        guard read(fd, &magic, 8) == 8 else { return nil }
        return magic == sealedKeyFileMagic
    }

    /// Writes a new random key file (0600) sealed by `sealer`, which this machine alone can open;
    /// nil if a key file appeared meanwhile. The key exists unsealed only in guarded memory.
    static func createSealedKeyFile(_ url: URL, sealer: SystemdCreds) throws -> SecureBytes? {
        let key = try SecureBytes.random(count: keyBytes)
        let sealed = try sealer.seal(key)
        // The sealed form must open here before it replaces nothing and becomes the only copy.
        let check = try sealer.unseal(sealed, keyBytes: keyBytes)
        guard check.withUnsafeBytes({ key.constantTimeEquals(Array($0)) }) else {
            throw CredentialStorageError(.io, "systemd-creds did not give back the key it sealed")
        }
        return try linkNewKeyFile(url, contents: sealedKeyFileMagic + sealed) ? key : nil
    }

    /// Seals the plain key file at `url` in place, through a rename; false when it is sealed
    /// already.
    static func sealKeyFile(_ url: URL, sealer: SystemdCreds) throws -> Bool {
        if isSealedKeyFile(url.path) == true { return false }
        let key = try readKeyFile(url, sealer: sealer)
        let sealed = try sealer.seal(key)
        let check = try sealer.unseal(sealed, keyBytes: keyBytes)
        guard check.withUnsafeBytes({ key.constantTimeEquals(Array($0)) }) else {
            throw CredentialStorageError(.io, "systemd-creds did not give back the key it sealed")
        }
        try writeAtomically(url, bytes: sealedKeyFileMagic + sealed)
        return true
    }

    /// Writes a new random key file (0600) and returns its key; nil if one appeared meanwhile.
    ///
    /// The file is written whole under a temporary name and then linked into place, which fails
    /// if the name exists: another process never reads half a key file, and two processes
    /// creating the same store never overwrite each other's key.
    static func createKeyFile(_ url: URL) throws -> SecureBytes? {
        let key = try SecureBytes.random(count: keyBytes)
        var contents = keyFileMagic
        key.withUnsafeBytes { contents.append(contentsOf: $0) }
        defer { Sodium.zero(&contents) }
        return try linkNewKeyFile(url, contents: contents) ? key : nil
    }

    /// Puts a new key file's `contents` at `url` (``linkNew(_:contents:)``), making its folder
    /// first; false if a key file is already there.
    private static func linkNewKeyFile(_ url: URL, contents: [UInt8]) throws -> Bool {
        try ensureDirectory(url.deletingLastPathComponent())
        return try linkNew(url, contents: contents)
    }
}
