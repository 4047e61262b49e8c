import CredentialStoreCore
import CredentialStoreCrypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What the anchor folder remembers of the store at one path: its store id and how it is unlocked,
/// in a file named by a hash of the path (`path-<hex>`), beside the generation anchors.
///
/// A store file can be replaced as a whole by anyone who can write its folder: by another store
/// (another id), or by a key-file store, with the attacker's key file beside it, where a passphrase
/// store was. Everything inside such a store is consistent, so only a record kept elsewhere notices
/// it; opening a store that is not the one recorded for its path is `tamperDetected`, until the
/// user says the new one is theirs (``StoreFile/accept(at:key:logger:rollbackAnchor:)``,
/// `credstore init --force`; or ``StoreFile/restore(from:passphrase:to:key:logger:rollbackAnchor:confirm:)``,
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
            "the store at \(databasePath) is not the one last seen there: \(what), so it was replaced. If it was replaced on purpose, accept it (StoreFile.accept(at:key:)); otherwise restore your own store")
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
