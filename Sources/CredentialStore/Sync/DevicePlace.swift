import CredentialStoreCrypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a device identity was made: a digest of the machine's id (`/etc/machine-id`) and of a
/// random id kept in the user's state folder (`place` beside the rollback anchors, made on first
/// use).
///
/// A store copied onto another machine, or into another user's home, finds another place there,
/// and takes a new device identity (``SyncLedger/device(settlingAt:renew:)``); a store restored
/// where its backup was made finds its own place, and keeps its identity. Deleting the state
/// folder makes a new place: the store's next sync then gives it a new identity, which its peers
/// trust like a new machine.
struct DevicePlace: Sendable, Hashable {
    static let bytes = 16
    let digest: [UInt8]

    /// The place of the state folder `directory` on this machine; nil when the folder's id can
    /// neither be read nor made (then no identity is ever replaced for want of one).
    static func current(stateFolder directory: URL) -> DevicePlace? {
        guard let folderID = folderID(in: directory) else { return nil }
        // The hash's domain: this fingerprint and nothing else.
        var input = Array("credstore/device-place/1\n".utf8)
        input += machineID() + [0x0a] + folderID
        return DevicePlace(digest: Sodium.hash(input, outputBytes: bytes))
    }

    /// The state folder's random id, made whole on first use (two processes making it at once
    /// agree on the first one). A file owned by another user is not believed.
    private static func folderID(in directory: URL) -> [UInt8]? {
        let url = directory.appendingPathComponent("place", isDirectory: false)
        if let found = read(url) { return found }
        let hexDigits = Array("0123456789abcdef".utf8)
        var made: [UInt8] = []
        for byte in Sodium.randomBytes(16) { made += [hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0f)]] }
        made.append(0x0a)
        guard (try? StoreFiles.ensureDirectory(directory)) != nil, (try? StoreFiles.linkNew(url, contents: made)) != nil else { return nil }
        return read(url)
    }

    /// The id in the file, when it is this user's and holds 32 hex digits.
    private static func read(_ url: URL) -> [UInt8]? {
        let file = open(url.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard file >= 0 else { return nil }
        defer { close(file) }
        var info = stat()
        guard fstat(file, &info) == 0, (try? StoreFiles.checkOwner(info, of: url.path, what: "")) != nil else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(file, $0.baseAddress, $0.count) }
        guard count >= 32 else { return nil }
        let text = Array(buffer[..<32])
        guard text.allSatisfy({ ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "f")) }) else { return nil }
        return text
    }

    /// The machine's id, or nothing where the system keeps none (the state folder's id then tells
    /// places apart alone).
    private static func machineID() -> [UInt8] {
        for path in ["/etc/machine-id", "/var/lib/dbus/machine-id"] {
            if let data = FileManager.default.contents(atPath: path) {
                let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                if !text.isEmpty { return Array(text.utf8) }
            }
        }
        return []
    }
}
