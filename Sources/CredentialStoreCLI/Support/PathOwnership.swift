import CredentialStore
import Foundation
#if canImport(Glibc)
// `struct stat` is CoreFoundation's declaration once swift-nio's modules are in the build: the
// member-import check wants the module that declares it.
import CoreFoundation
import Glibc
#endif

/// Whether another user could change a file, or swap it or a folder on the way to it, for one of
/// their own: what credstore checks before it writes a key where curl reads it, and before it
/// runs a program that will receive the user's secrets.
///
/// Every element from the path up to `/` must belong to this user or root, and be closed to
/// writes by group and others; a folder may be open to them with the sticky bit, which (as on
/// /tmp) keeps others from renaming what is not theirs. OpenSSH checks a key's folders the same
/// way (StrictModes).
enum PathOwnership {
    /// The first element that fails, and why.
    enum Flaw: Error, Equatable {
        /// It could not be read.
        case unreadable(path: String, reason: String)
        /// It belongs to another user.
        case foreignOwner(path: String, uid: uid_t)
        /// Group or others may write it (its mode, in octal).
        case writableByOthers(path: String, mode: String)
    }

    /// Checks `path` (resolved through its links first) and every folder above it.
    ///
    /// - Returns: the path as resolved, which is what must then be used, so that no link is
    ///   followed again after the check.
    static func check(_ path: String) throws(Flaw) -> String {
        guard let resolved = realpath(path, nil) else {
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        let start = String(cString: resolved)
        free(resolved)
        var element = start
        while true {
            var info = stat()
            guard stat(element, &info) == 0 else {
                throw .unreadable(path: element, reason: String(cString: strerror(errno)))
            }
            guard info.st_uid == 0 || info.st_uid == getuid() else {
                throw .foreignOwner(path: element, uid: info.st_uid)
            }
            let isFolder = info.st_mode & S_IFMT == S_IFDIR
            guard info.st_mode & 0o022 == 0 || (isFolder && info.st_mode & S_ISVTX != 0) else {
                throw .writableByOthers(path: element, mode: String(info.st_mode & 0o7777, radix: 8))
            }
            guard element != "/" else { return start }
            element = element.parentPath
        }
    }
}
