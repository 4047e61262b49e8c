import CredentialStore
import Foundation
#if canImport(Glibc)
// `struct stat` is CoreFoundation's declaration once swift-nio's modules are in the build: the
// member-import check wants the module that declares it.
import CoreFoundation
import Glibc
#endif

/// The folder `curl-args` writes a server's PEM files to, and the names it gives them.
///
/// The key file is a client's private key in the clear, so the folder must be one no one else can
/// open, list or swap: it is checked with `lstat` (a folder, not a symbolic link, the user's own,
/// no permission for group or others) before anything is written to it or removed from it.
struct CurlFilesFolder {
    /// Where the files go.
    let path: String
    /// Whether `path` is credstore's own default, whose missing parents it creates (0700).
    private let isDefault: Bool

    /// `--dir`'s folder, used as given.
    init(given path: String) {
        self.path = path
        isDefault = false
    }

    /// The default folder: `$XDG_RUNTIME_DIR/credstore-curl`, else
    /// `$XDG_STATE_HOME/credstore/curl`, else `~/.local/state/credstore/curl`.
    ///
    /// `XDG_RUNTIME_DIR` is a tmpfs of the user's own that the system empties at logout, the best
    /// place for a key; cron, containers and logins without systemd have none. The state folder
    /// that then takes its place is inside the user's home, where the rollback anchors already
    /// live: no other user can create a name there first, as anyone can in /tmp. A relative
    /// variable counts as unset, as the XDG base directory specification asks.
    static func standard(_ console: Console) -> CurlFilesFolder {
        standardFolders(console)[0]
    }

    /// Every folder ``standard(_:)`` can be: the runtime one (when `XDG_RUNTIME_DIR` is set here)
    /// and the state one. Which one a run of `curl-args` used depended on its environment (a
    /// cron job has no runtime folder), so what removes files looks in both.
    static func standardFolders(_ console: Console) -> [CurlFilesFolder] {
        let state: String
        if let xdg = console.variable("XDG_STATE_HOME"), xdg.isAbsolutePath {
            state = xdg
        } else {
            let home = console.variable("HOME") ?? FileManager.default.homeDirectoryForCurrentUser.path
            state = home + "/.local/state"
        }
        let stateFolder = CurlFilesFolder(path: state + "/credstore/curl", isDefault: true)
        if let runtime = console.variable("XDG_RUNTIME_DIR"), runtime.isAbsolutePath {
            return [CurlFilesFolder(path: runtime + "/credstore-curl", isDefault: true), stateFolder]
        }
        return [stateFolder]
    }

    private init(path: String, isDefault: Bool) {
        self.path = path
        self.isDefault = isDefault
    }

    /// Creates the folder (0700) if it is missing, then ``check()``s it.
    func prepare() throws {
        if isDefault {
            // Its parents as `mkdir -p` would make them, but closed to others like the store's.
            var parent = ""
            for component in path.pathElements.dropLast() {
                parent += "/" + component
                if mkdir(parent, 0o700) != 0, errno != EEXIST {
                    throw CommandFailure(.ioError, "cannot create \(parent): \(String(cString: strerror(errno)))")
                }
            }
        }
        // mkdir never follows a symbolic link at the path: one there is EEXIST, and check() refuses it.
        if mkdir(path, 0o700) != 0, errno != EEXIST {
            throw CommandFailure(.ioError, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        try check()
    }

    /// Whether the folder exists (as anything, a symbolic link included).
    var exists: Bool {
        var info = stat()
        return lstat(path, &info) == 0 || errno != ENOENT
    }

    /// Refuses a folder that is not the user's own and closed to others: a symbolic link (which
    /// would send the key elsewhere), another user's folder, or one that group or others can open.
    func check() throws {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            throw CommandFailure(.ioError, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        switch info.st_mode & S_IFMT {
        case S_IFDIR:
            break
        case S_IFLNK:
            throw CommandFailure(.noPermission, "\(path) is a symbolic link, and curl's key file is never written through one; give --dir a folder of yours, or remove the link if you made it")
        default:
            throw CommandFailure(.noPermission, "\(path) is not a folder; give --dir a folder of yours, or move that file away")
        }
        guard info.st_uid == getuid() else {
            throw CommandFailure(.noPermission, "\(path) belongs to another user (uid \(info.st_uid)); give --dir a folder of yours")
        }
        guard info.st_mode & 0o077 == 0 else {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw CommandFailure(.noPermission, "\(path) is open to others (mode \(mode)); close it with `chmod 700 \(ShellWords.quoted(path))`, or give --dir another folder")
        }
        try checkAncestors()
    }

    /// Refuses a folder that someone else could swap for another: one whose parent, or any
    /// folder above it, another user could change (``PathOwnership``).
    private func checkAncestors() throws {
        let parentPath = path.parentPath
        do {
            _ = try PathOwnership.check(parentPath.isEmpty ? "." : parentPath)
        } catch .unreadable(let ancestor, let reason) {
            throw CommandFailure(.ioError, "cannot read \(ancestor): \(reason)")
        } catch .foreignOwner(let ancestor, let uid) {
            throw CommandFailure(.noPermission, "\(ancestor), above \(path), belongs to another user (uid \(uid)), who could put another folder in its place; give --dir a folder of yours")
        } catch .writableByOthers(let ancestor, let mode) {
            throw CommandFailure(.noPermission, "\(ancestor), above \(path), can be written by others (mode \(mode)), who could put another folder in its place; close it with `chmod go-w \(ShellWords.quoted(ancestor))`, or give --dir another folder")
        }
    }

    /// The path of `server`'s file with `ending` (`.crt`, `.key`, `-ca.pem`).
    func file(_ server: Server, _ ending: String) -> String {
        "\(path)/\(server.fileStem)\(ending)"
    }

    /// Removes `server`'s files (and the temporaries of them that a run that died left), then the
    /// folder if that left it empty: never another server's files, nor anything else.
    func remove(_ server: Server) throws {
        guard exists else { return }
        try check()  // ours and closed to others, or nothing is removed
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        for name in names where server.owns(name) {
            unlink("\(path)/\(name)")
        }
        rmdir(path)
    }

    /// Removes each server's certificate and key files whose key file holds `key` (a client
    /// identity's private key, as `curl-args` writes it), then the folder if that left it empty:
    /// never a file that holds another key (another identity's, another store's, the user's own),
    /// nor a server's `-ca.pem`, which is trust, not identity.
    ///
    /// - Returns: how many servers' files were removed.
    @discardableResult
    func removeFiles(holding key: [UInt8]) throws -> Int {
        var removed = 0
        for server in try servers() {
            let keyFile = file(server, ".key")
            var info = stat()
            // A regular file, read without following a link: a link named like a key file is not one.
            guard lstat(keyFile, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
                  FileManager.default.contents(atPath: keyFile).map({ Array($0) == key }) == true else { continue }
            unlink(keyFile)
            unlink(file(server, ".crt"))
            removed += 1
        }
        rmdir(path)
        return removed
    }

    /// The servers that have files in the folder (temporaries included), each once; none when
    /// there is no folder.
    func servers() throws -> [Server] {
        guard exists else { return [] }
        try check()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        var seen: Set<String> = []
        return names.sorted().compactMap { name in
            guard let server = Server(fileName: TLSFiles.replacedFile(ofTemporary: name) ?? name),
                  seen.insert(server.fileStem).inserted else { return nil }
            return server
        }
    }
}

extension CurlFilesFolder {
    /// A server's host and port, as the names of its files spell them.
    struct Server {
        let host: String
        let port: Int

        /// The endings of the files `curl-args` writes for a server.
        static let endings = [".crt", ".key", "-ca.pem"]

        /// `HOST-PORT`, the host's letters, digits, dots and dashes as they are and every other
        /// byte (an IPv6 colon, an underscore, a leading dot) as `_` and two hex digits.
        ///
        /// One name per server and one server per name: two servers whose files shared a name
        /// would overwrite each other's key, and `--clean` of one would remove the other's.
        var fileStem: String {
            let digits = Array("0123456789ABCDEF".utf8)
            var name: [UInt8] = []
            for (offset, byte) in host.utf8.enumerated() {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
                    name.append(byte)
                case UInt8(ascii: ".") where offset > 0:
                    name.append(byte)
                default:
                    name += [UInt8(ascii: "_"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
                }
            }
            return String(decoding: name, as: UTF8.self) + "-\(port)"
        }

        init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// The server a file of the folder is named for (``fileStem`` read back); nil for a
        /// name `curl-args` does not write.
        init?(fileName: String) {
            guard let ending = Self.endings.first(where: { fileName.hasSuffix($0) }) else { return nil }
            let stem = fileName.dropLast(ending.count)
            guard let dash = stem.lastIndex(of: "-"), let port = Int(stem[stem.index(after: dash)...]), port > 0, port <= 65535 else { return nil }
            var bytes: [UInt8] = []
            var rest = Array(stem[..<dash].utf8)[...]
            while let byte = rest.popFirst() {
                if byte == UInt8(ascii: "_") {
                    guard rest.count >= 2, let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16) else { return nil }
                    bytes.append(value)
                    rest = rest.dropFirst(2)
                } else {
                    bytes.append(byte)
                }
            }
            guard !bytes.isEmpty, let host = String(validating: bytes, as: UTF8.self) else { return nil }
            self.init(host: host, port: port)
            // One name per server: a name this server would not be given is not one of ours.
            guard fileStem == stem else { return nil }
        }

        /// Whether `name` is one of this server's files, or the temporary of one.
        func owns(_ name: String) -> Bool {
            let file = TLSFiles.replacedFile(ofTemporary: name) ?? name
            let stem = fileStem
            return Self.endings.contains { file == stem + $0 }
        }
    }
}
