import CredentialStoreCrypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What the user's state folder remembers of the last bundle a device wrote into one sync folder:
/// which store wrote it (the database's path), a digest of the file, and the time the bundle
/// carries. In a file beside the rollback anchors named by a hash of the folder's real path and
/// the device id (`bundle-<hex>`).
///
/// A bundle bearing this device's id that is not the one recorded was written by another live
/// store with the same identity (a copy), and `sync` refuses to write over it: each would
/// overwrite the other's changes, and neither merges a file bearing its own id.
struct SyncBundleRecord: Equatable {
    /// The digest of the bundle file (``digest(of:)``).
    var digest: [UInt8]
    /// The bundle's creation time, milliseconds since 1970.
    var created: Int64
    /// The database path of the store that wrote it.
    var storePath: String
    /// The store's seal generation when it wrote the bundle (nil in records written before it was
    /// kept): a store whose generation is lower now went back (a backup restored, an older copy
    /// accepted) and holds less than its own bundle.
    var generation: Int64?

    /// The record file for `deviceID`'s bundle in `folder`.
    static func location(stateFolder: URL, folder: URL, deviceID: [UInt8]) -> URL {
        var canonical = folder.path
        if let resolved = realpath(folder.path, nil) {
            canonical = String(cString: resolved)
            free(resolved)
        }
        let digest = Sodium.hash(Array("\(canonical)\n".utf8) + deviceID, outputBytes: 16)
        return stateFolder.appendingPathComponent("bundle-" + hex(digest), isDirectory: false)
    }

    /// The record at `url`; nil when there is none or it does not read as one (written by this
    /// user only: the folder is theirs, 0700).
    static func read(_ url: URL) -> SyncBundleRecord? {
        guard let data = FileManager.default.contents(atPath: url.path), data.count < 8192 else { return nil }
        var text = String(decoding: data, as: UTF8.self)
        guard text.hasSuffix("\n") else { return nil }
        text.removeLast()
        // Version 2 adds the generation before the path (which may hold spaces, so it comes last).
        let parts = text.split(separator: " ", maxSplits: text.hasPrefix("2 ") ? 4 : 3, omittingEmptySubsequences: false)
        switch parts.first {
        case "1":
            guard parts.count == 4, let digest = unhex(parts[1]), digest.count == 32,
                  let created = Int64(parts[2]), !parts[3].isEmpty else { return nil }
            return SyncBundleRecord(digest: digest, created: created, storePath: String(parts[3]))
        case "2":
            guard parts.count == 5, let digest = unhex(parts[1]), digest.count == 32,
                  let created = Int64(parts[2]), let generation = Int64(parts[3]), !parts[4].isEmpty else { return nil }
            return SyncBundleRecord(digest: digest, created: created, storePath: String(parts[4]), generation: generation)
        default:
            return nil
        }
    }

    /// The record, among those in `stateFolder` (one a sync folder and device), of the bundle
    /// whose digest is `digest`: the bundle is that one, wherever it is now, for a user who copied
    /// it from one sync folder into another.
    static func record(of digest: [UInt8], in stateFolder: URL) -> SyncBundleRecord? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: stateFolder.path) else { return nil }
        for name in names.sorted() where name.hasPrefix("bundle-") {
            if let record = read(stateFolder.appendingPathComponent(name, isDirectory: false)), record.digest == digest {
                return record
            }
        }
        return nil
    }

    /// Writes the record (0600, atomically). Best effort: a record that cannot be written only
    /// makes the next check find none.
    func write(to url: URL) {
        guard (try? StoreFiles.ensureDirectory(url.deletingLastPathComponent())) != nil else { return }
        let line = generation.map { "2 \(Self.hex(digest)) \(created) \($0) \(storePath)\n" } ?? "1 \(Self.hex(digest)) \(created) \(storePath)\n"
        try? StoreFiles.writeAtomically(url, bytes: Array(line.utf8))
    }

    /// A digest of the file: its size and its first 64 KiB, which hold the bundle's header and its
    /// random stream header, so every write of a bundle has its own. Nil when it cannot be read.
    static func digest(of url: URL) -> [UInt8]? {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 64 * 1024), let size = try? handle.seekToEnd() else { return nil }
        return Sodium.hash(Array("\(size)\n".utf8) + Array(head), outputBytes: 32)
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    private static func unhex(_ text: Substring) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
