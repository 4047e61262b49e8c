import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
public import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Where a store's rollback anchor is kept: a small file outside the store's folder recording the
/// newest table-seal generation this user has seen of that store.
///
/// Everything inside the database can be rolled back together, by restoring an older copy of the
/// whole file; the table seal then matches, because it is old too. The anchor survives such a
/// restore as long as it lives elsewhere: opening a store whose generation is below its anchor's
/// is `tamperDetected`. It is a best-effort record (written after each commit, without fsync), so
/// it may lag the store after a crash, which is harmless; it is never ahead of a store that was
/// not rolled back.
public struct RollbackAnchor: Sendable, Hashable {
    let directory: URL?

    /// `$XDG_STATE_HOME/credstore/anchors`, or `~/.local/state/credstore/anchors`.
    public static var standard: RollbackAnchor {
        // getenv rather than ProcessInfo, whose first use costs `credstore get` a tenth of a
        // millisecond of set-up for two variables.
        func variable(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
        let base: URL
        if let xdg = variable("XDG_STATE_HOME"), xdg.isAbsolutePath {
            base = URL(fileURLWithPath: xdg, isDirectory: true)
        } else {
            let home = variable("HOME").map { URL(fileURLWithPath: $0, isDirectory: true) }
                ?? FileManager.default.homeDirectoryForCurrentUser
            base = home.appendingPathComponent(".local/state", isDirectory: true)
        }
        return RollbackAnchor(directory: base.appendingPathComponent("credstore/anchors", isDirectory: true))
    }

    /// Anchors in `directory` (one file per store, named by its store id).
    public static func directory(_ directory: URL) -> RollbackAnchor {
        RollbackAnchor(directory: directory)
    }

    /// No anchor: a rollback of the whole file goes unnoticed.
    public static let none = RollbackAnchor(directory: nil)
}

/// One store's anchor file: the generation as 20 decimal digits and a newline, rewritten in place.
///
/// Plain POSIX I/O on a descriptor kept for the store's life: the anchor is read on every open
/// (including each `credstore get`) and advanced after every commit, so it must cost a `pread`
/// or a `pwrite`, not a trip through Foundation's file and formatting APIs.
final class AnchorFile: Sendable {
    let path: String
    /// Fixed width, so an in-place rewrite never leaves a longer old number's tail behind.
    private static let width = 20
    /// The open file, once it exists; nil while it does not.
    private let descriptor = Mutex<Int32?>(nil)

    /// The anchor an earlier version kept for the store id alone, which the first open of the
    /// store at any path adopts (renames to its own): nil once adopted, or for a new store.
    private let legacyPath: String

    /// The anchor of the store with `storeID` at `databaseURL`: named by both, so that a copy of a
    /// store at another path (`cp -r` beside the original) keeps a history of its own, and writing
    /// to one never makes the other read as rolled back.
    init?(_ anchor: RollbackAnchor, storeID: [UInt8], databaseURL: URL) {
        guard let directory = anchor.directory else { return nil }
        let hexDigits = Array("0123456789abcdef".utf8)
        func hex(_ bytes: [UInt8]) -> String { String(decoding: bytes.flatMap { [hexDigits[Int($0 >> 4)], hexDigits[Int($0 & 0x0f)]] }, as: UTF8.self) }
        let place = Sodium.hash(Array(StoreFiles.canonicalPath(databaseURL.path).utf8), outputBytes: 8)
        path = directory.appendingPathComponent(hex(storeID) + "-" + hex(place), isDirectory: false).path
        legacyPath = directory.appendingPathComponent(hex(storeID), isDirectory: false).path
    }

    deinit {
        descriptor.withLock { if let file = $0 { close(file) } }
    }

    /// The generation recorded, if the anchor exists and reads as one.
    func recordedGeneration() -> Int64? {
        descriptor.withLock { slot in
            guard let file = openFile(&slot) else { return nil }
            return Self.generation(in: file)
        }
    }

    /// `tamperDetected` when the store is older than what this user last saw of it.
    ///
    /// - Parameter recorded: the anchor's generation, read *before* the store's: other processes
    ///   commit and advance the anchor all the time, so an anchor read after the store's snapshot
    ///   may rightly be ahead of it. Read before, it can only hold generations committed before
    ///   the snapshot, which a store that was not rolled back has.
    func check(storeGeneration: Int64, recorded: Int64?) throws {
        if let recorded, recorded > storeGeneration {
            throw CredentialStorageError(.tamperDetected,
                "the store is older than it was last seen here (generation \(storeGeneration), last seen \(recorded) by the anchor \(path)): it was rolled back to an older copy. If you put the older copy back on purpose, accept it (CredentialStorage.acceptStore(at:key:)); otherwise restore your store from a backup")
        }
    }

    /// Records `generation` if it is newer than the recorded one. Failures are ignored: the
    /// anchor only ever makes detection possible, and a store must not fail for want of it.
    func advance(to generation: Int64) {
        descriptor.withLock { slot in
            guard let file = openFile(&slot, creating: true) else { return }
            if let recorded = Self.generation(in: file), recorded >= generation { return }
            var text = Array(String(generation).utf8)
            text = Array(repeating: UInt8(ascii: "0"), count: max(0, Self.width - text.count)) + text + [UInt8(ascii: "\n")]
            _ = text.withUnsafeBytes { pwrite(file, $0.baseAddress, $0.count, 0) }
        }
    }

    /// The anchor's descriptor, opened on first use; with `creating`, a missing anchor is created
    /// first, whole, at generation 0 (which holds nothing back): a reader never finds it empty or
    /// half written, and two processes creating it do not write over each other. Reopened when
    /// the file was deleted meanwhile (which is how a user accepts a restored backup), so that
    /// later generations go to the new anchor rather than to the unlinked one.
    private func openFile(_ slot: inout Int32?, creating: Bool = false) -> Int32? {
        if let file = slot {
            var info = stat()
            if fstat(file, &info) == 0, info.st_nlink > 0 { return file }
            close(file)
            slot = nil
        }
        var file = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        // An anchor of an earlier version's naming: taken over whole, by one process only.
        if file < 0, errno == ENOENT, rename(legacyPath, path) == 0 || errno != ENOENT {
            file = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        }
        if file < 0, errno == ENOENT, creating {
            let url = URL(fileURLWithPath: path, isDirectory: false)
            guard (try? StoreFiles.ensureDirectory(url.deletingLastPathComponent())) != nil else { return nil }
            let zero = [UInt8](repeating: UInt8(ascii: "0"), count: Self.width) + [UInt8(ascii: "\n")]
            // False when another process's anchor got there first: that one is opened.
            _ = try? StoreFiles.linkNew(url, contents: zero)
            file = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        }
        guard file >= 0 else { return nil }
        // Another user's anchor is neither believed nor written (the folder is this user's, 0700,
        // so only root could have put it there; root's own is accepted like any of root's files).
        var info = stat()
        guard fstat(file, &info) == 0, (try? StoreFiles.checkOwner(info, of: path, what: "")) != nil else {
            close(file)
            return nil
        }
        slot = file
        return file
    }

    /// The number at the start of the file, digits then optional white space; nil otherwise.
    private static func generation(in file: Int32) -> Int64? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(file, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = buffer[..<count]
        let digits = text.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        guard !digits.isEmpty, text.dropFirst(digits.count).allSatisfy({ $0 == 0x20 || $0 == 0x0a || $0 == 0x09 || $0 == 0x0d })
        else { return nil }
        return Int64(String(decoding: digits, as: UTF8.self))
    }
}

/// What the anchor folder remembers of the store at one path: its store id and how it is unlocked,
/// in a file named by a hash of the path (`path-<hex>`), beside the generation anchors.
///
/// A store file can be replaced as a whole by anyone who can write its folder: by another store
/// (another id), or by a key-file store, with the attacker's key file beside it, where a passphrase
/// store was. Everything inside such a store is consistent, so only a record kept elsewhere notices
/// it; opening a store that is not the one recorded for its path is `tamperDetected`, until the
/// user says the new one is theirs (``CredentialStorage/acceptStore(at:key:logger:rollbackAnchor:)``,
/// `credstore init --force`; or ``CredentialStorage/restore(from:passphrase:to:key:logger:rollbackAnchor:confirm:)``,
/// which records the store it puts in place). Creating a store where none is records the new one: nothing is read
/// from a file someone else made then.
struct StoreRecord {
    let path: String
    let databasePath: String

    /// The record of the store at `databaseURL`, whose folder exists; nil without an anchor folder.
    init?(_ anchor: RollbackAnchor, databaseURL: URL) {
        guard let directory = anchor.directory else { return nil }
        // The folder's real path, so that two spellings of one store share a record.
        databasePath = StoreFiles.canonicalPath(databaseURL.path)
        let digest = Sodium.hash(Array(databasePath.utf8), outputBytes: 16)
        let hexDigits = Array("0123456789abcdef".utf8)
        let name = "path-" + String(decoding: digest.flatMap { [hexDigits[Int($0 >> 4)], hexDigits[Int($0 & 0x0f)]] }, as: UTF8.self)
        path = directory.appendingPathComponent(name, isDirectory: false).path
    }

    /// The line recorded for a store: a version, the store id in hex, the protection.
    static func line(storeID: [UInt8], protection: StoreProtection) -> String {
        let hexDigits = Array("0123456789abcdef".utf8)
        let id = String(decoding: storeID.flatMap { [hexDigits[Int($0 >> 4)], hexDigits[Int($0 & 0x0f)]] }, as: UTF8.self)
        return "1 \(id) \(protection.rawValue)\n"
    }

    /// The recorded line, nil when there is none. A record owned by another user is refused.
    func recorded() throws -> String? {
        let file = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard file >= 0 else { return nil }
        defer { close(file) }
        var info = stat()
        guard fstat(file, &info) == 0 else { return nil }
        try StoreFiles.checkOwner(info, of: path, what: "the store record")
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    /// `tamperDetected` when the store at the path is not the one recorded there; records it when
    /// nothing is (best effort: the record only ever makes detection possible).
    func check(storeID: [UInt8], protection: StoreProtection) throws {
        let expected = Self.line(storeID: storeID, protection: protection)
        var recorded = try recorded()
        if recorded == nil {
            // Made whole and never over a record another process wrote meanwhile, which is read
            // instead (made by the one creation that could put a store here since).
            if createRecord(expected) { return }
            recorded = try self.recorded()
        }
        guard let first = recorded, first != expected else { return }
        // A new store is put in place and recorded under its folder's lock: taken here, the
        // record read again is the store's own if it was just created in place of a deleted one.
        let folder = databasePath.parentPath
        guard let recorded = try StoreFiles.withFolderLock(folder, exclusive: false, { try self.recorded() }), recorded != expected else { return }
        let parts = recorded.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        func describe(_ kind: String) -> String { kind == StoreProtection.passphrase.rawValue ? "locked with a passphrase" : "unlocked by a key file" }
        var differences: [String] = []
        if parts.count != 3 || parts[1] != expected.split(separator: " ")[1] { differences.append("it is another store (another store id)") }
        if parts.count == 3, parts[2] != protection.rawValue {
            differences.append("it was \(describe(parts[2])) and is now \(describe(protection.rawValue))")
        }
        let what = differences.isEmpty ? "its record does not match" : differences.joined(separator: ", and ")
        throw CredentialStorageError(.tamperDetected,
            "the store at \(databasePath) is not the one last seen there: \(what), so it was replaced. If it was replaced on purpose, accept it (CredentialStorage.acceptStore(at:key:)); otherwise restore your own store")
    }

    /// Writes `line` as the record (0600, atomically), over any record there, creating the anchor
    /// folder: for a store just created at the path.
    func record(_ line: String) {
        let url = URL(fileURLWithPath: path, isDirectory: false)
        guard (try? StoreFiles.ensureDirectory(url.deletingLastPathComponent())) != nil else { return }
        try? StoreFiles.writeAtomically(url, bytes: Array(line.utf8))
    }

    /// Writes `line` as the record where there is none (0600, whole); false when a record is
    /// there already, or cannot be written.
    private func createRecord(_ line: String) -> Bool {
        let url = URL(fileURLWithPath: path, isDirectory: false)
        guard (try? StoreFiles.ensureDirectory(url.deletingLastPathComponent())) != nil else { return false }
        return (try? StoreFiles.linkNew(url, contents: Array(line.utf8))) == true
    }

    /// Forgets the record, so that the next open records whichever store is at the path.
    func forget() throws {
        guard unlink(path) == 0 || errno == ENOENT else {
            throw CredentialStorageError(.io, "could not remove \(path): \(String(cString: strerror(errno)))")
        }
    }
}
