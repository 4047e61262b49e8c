import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
public import Foundation
#if canImport(Glibc)
import Glibc
#endif

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
