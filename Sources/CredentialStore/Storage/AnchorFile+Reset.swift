import CredentialStoreCore
import Foundation

extension AnchorFile {
    /// Records `generation` whether or not it is older than the recorded one: the user accepted a
    /// store at that generation (a backup restored, an older copy put back on purpose), whose later
    /// history the anchor follows from then on.
    ///
    /// Written whole under a temporary name and renamed into place: an instance of any process
    /// holding the old anchor open finds it unlinked and opens the new one on its next use.
    func reset(to generation: Int64) throws {
        let url = URL(fileURLWithPath: path, isDirectory: false)
        let digits = Array(String(generation).utf8)
        // The width every anchor has: 20 digits and a newline.
        let line = [UInt8](repeating: UInt8(ascii: "0"), count: max(0, 20 - digits.count)) + digits + [UInt8(ascii: "\n")]
        do {
            try StoreFiles.ensureDirectory(url.deletingLastPathComponent())
            try StoreFiles.writeAtomically(url, bytes: line)
        } catch let error as CredentialStorageError {
            throw CredentialStorageError(.io, "could not write the rollback anchor \(path): \(error.message)")
        }
    }
}
