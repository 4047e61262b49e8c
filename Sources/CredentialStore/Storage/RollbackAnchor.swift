public import Foundation

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
        let environment = ProcessInfo.processInfo.environment
        let base: URL
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            base = URL(fileURLWithPath: xdg, isDirectory: true)
        } else {
            let home = environment["HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
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

/// One store's anchor file: the generation as 20 decimal digits, rewritten in place.
final class AnchorFile: @unchecked Sendable {
    let path: String
    private let lock = NSLock()

    init?(_ anchor: RollbackAnchor, storeID: [UInt8]) {
        guard let directory = anchor.directory else { return nil }
        path = directory.appendingPathComponent(storeID.map { String(format: "%02x", $0) }.joined()).path
    }

    /// The generation recorded, if the anchor exists and reads as one.
    func recordedGeneration() -> Int64? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return Int64(text.trimmingCharacters(in: .whitespacesAndNewlines))
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
                "the store is older than it was last seen here (generation \(storeGeneration), last seen \(recorded)): it was rolled back to an older copy. If you restored a backup on purpose, delete \(path) and open it again")
        }
    }

    /// Records `generation` if it is newer than the recorded one. Failures are ignored: the
    /// anchor only ever makes detection possible, and a store must not fail for want of it.
    func advance(to generation: Int64) {
        lock.lock()
        defer { lock.unlock() }
        if let recorded = recordedGeneration(), recorded >= generation { return }
        let directory = (path as NSString).deletingLastPathComponent
        if (try? StoreFiles.ensureDirectory(URL(fileURLWithPath: directory, isDirectory: true))) == nil { return }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        // Fixed width, so an in-place rewrite never leaves a longer old number's tail behind.
        let text = Array(String(format: "%020lld\n", generation).utf8)
        _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }
}
