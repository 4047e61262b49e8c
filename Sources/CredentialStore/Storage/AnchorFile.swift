import CredentialStoreCore
import CredentialStoreCrypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

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
                "the store is older than it was last seen here (generation \(storeGeneration), last seen \(recorded) by the anchor \(path)): it was rolled back to an older copy. If you put the older copy back on purpose, accept it (StoreFile.accept(at:key:)); otherwise restore your store from a backup")
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
