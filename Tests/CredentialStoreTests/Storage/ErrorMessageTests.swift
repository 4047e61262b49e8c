import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// The library's errors state what happened and a generic remedy in the library's terms; the
/// advice that names a command, a flag or an environment variable is the CLI's (ErrorAdvice.swift).
@Suite struct ErrorMessageTests {
    /// Words of the command line that a library message must not use.
    static func commandLineWords(in text: String) -> [String] {
        var found: [String] = []
        for word in ["`credstore ", "credstore init", "credstore verify", "credstore device", "CREDSTORE_"] where text.contains(word) {
            found.append(word)
        }
        // A long option: "--synchronizable", "(--force)"; not an em dash or a "--" in prose.
        if text.range(of: #"(^|[\s(`])--[a-z]"#, options: .regularExpression) != nil { found.append("--flag") }
        return found
    }

    /// The library's targets, every layer (docs/architecture.md, "Targets").
    static let libraryTargets = [
        "CredentialStoreCore", "CredentialStoreCrypto", "CredentialStorePersistence", "CredentialStoreChallenges", "CredentialStore",
    ]

    /// Every line of code in the library's targets, comments aside: each message the library
    /// can throw is written on one of them, so none escapes the check the way a list of
    /// examples would let a new message escape.
    @Test func noLibraryMessageNamesACommandAFlagOrAnEnvironmentVariable() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let files = try Self.libraryTargets.flatMap { target in
            try #require(FileManager.default.enumerator(at: root.appendingPathComponent("Sources/\(target)"), includingPropertiesForKeys: nil))
                .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        }
        #expect(files.count > 40, "the scan reads the library's sources")
        for file in files {
            for (number, line) in try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("//") { continue }
                let words = Self.commandLineWords(in: code)
                #expect(words.isEmpty, "\(file.lastPathComponent):\(number + 1) speaks the CLI's words \(words): \(code)")
            }
        }
    }

    @Test func theCheckCatchesTheWordsOfTheCommandLine() {
        #expect(!Self.commandLineWords(in: "run `credstore verify` and restore").isEmpty)
        #expect(!Self.commandLineWords(in: "pass .removeSynchronizable (--synchronizable) to confirm").isEmpty)
        #expect(!Self.commandLineWords(in: "set CREDSTORE_BUNDLE_PASSPHRASE").isEmpty)
        #expect(Self.commandLineWords(in: "the store was written by a newer credstore; upgrade credstore").isEmpty)
    }

    /// Errors as an application meets them: each says what happened, in the library's terms.
    @Test func errorsThrownInUseStateFactsWithoutCommandLineAdvice() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        let space = Fixture.space()
        let synced = Fixture.credential("alice", "pw", .synchronizable)
        try storage.set(synced, for: space)
        var errors: [CredentialStorageError] = []
        func collect(_ body: () throws -> Void) {
            do { try body() } catch let error as CredentialStorageError { errors.append(error) } catch {
                Issue.record("not a CredentialStorageError: \(error)")
            }
        }
        collect { _ = try storage.remove(user: synced.user, for: space) }
        collect { try storage.sync.untrust(try TemporaryStore().open().sync.deviceKey) }
        collect { _ = try DeviceKey("csdev1:nonsense") }
        collect { _ = try DeviceKey("ssh-ed25519 AAAA") }
        collect { try storage.maintenance.changePassphrase(to: "new") }
        #expect(errors.map(\.code) == [.synchronizableRemovalNeedsOption, .notFound, .invalidInput, .invalidInput, .wrongKey])
        #expect(errors.first?.message.contains("RemovalOptions.removeSynchronizable") == true, "the remedy in the library's terms")
        for error in errors {
            #expect(Self.commandLineWords(in: error.description).isEmpty, "\(error.description)")
        }
    }
}
