import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStoreTestSupport

/// Key files sealed by systemd-creds, from the library: what happens without the tool, with a tool
/// that fails, and (where systemd-creds works) a store created sealed.
@Suite(.cheapKeyDerivation) struct SealedKeyFileTests {
    private static let space = ProtectionSpace(host: "a.example.com", port: 443, protocol: "https", realm: nil)

    /// A file that looks sealed: the version-2 header and some base64.
    private func fakeSealedKeyFile(_ store: TemporaryStore) throws {
        let contents: [UInt8] = [0x43, 0x53, 0x4B, 0x45, 0x59, 0x00, 0x00, 0x02] + Array("V2hhdGV2ZXIK\n".utf8)
        try FileManager.default.createDirectory(at: store.keyFileURL.deletingLastPathComponent(), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        #expect(FileManager.default.createFile(atPath: store.keyFileURL.path, contents: Data(contents), attributes: [.posixPermissions: 0o600]))
    }

    @Test func withoutTheToolASealedKeyFileIsUnavailableNotAWrongKey() throws {
        let store = try TemporaryStore()
        try fakeSealedKeyFile(store)
        let error = #expect(throws: CredentialStorageError.self) {
            try StoreFiles.readKeyFile(store.keyFileURL, sealer: SystemdCreds(tool: nil))
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("systemd-creds is not installed") == true)
        let sealing = #expect(throws: CredentialStorageError.self) {
            try SystemdCreds(tool: nil).seal(SecureBytes.random(count: 32))
        }
        #expect(sealing?.code == .unavailable)
    }

    @Test func aToolThatFailsToSealLeavesNoKeyFile() throws {
        let store = try TemporaryStore()
        let error = #expect(throws: CredentialStorageError.self) {
            try StoreFiles.createSealedKeyFile(store.keyFileURL, sealer: SystemdCreds(tool: "/bin/false"))
        }
        #expect(error?.code == .unavailable)
        #expect(!FileManager.default.fileExists(atPath: store.keyFileURL.path))
    }

    @Test func theToolGetsSystemdsSettingsAndNoneOfTheCallersSecrets() throws {
        let store = try TemporaryStore()
        try FileManager.default.createDirectory(at: store.directory, withIntermediateDirectories: true)
        let seen = store.directory.appendingPathComponent("environment")
        // A link to a committed script, which writes what it was given beside the link.
        let tool = store.directory.appendingPathComponent("fake-systemd-creds")
        try FileManager.default.createSymbolicLink(at: tool, withDestinationURL: LocalScripts.url(named: "fake-systemd-creds"))
        #expect(throws: CredentialStorageError.self) { try SystemdCreds(tool: tool.path).seal(SecureBytes.random(count: 32)) }
        // The test's own environment (HOME, at least) does not reach the tool.
        let environment = try String(contentsOf: seen, encoding: .utf8)
        #expect(!environment.contains("HOME="), "\(environment)")
        #expect(environment.contains("PATH=/usr/bin:/bin"))
        // What is kept of an environment: systemd's settings, never a passphrase.
        let kept = SystemdCreds.toolEnvironment(from: ["CREDSTORE_PASSPHRASE=hunter2", "SYSTEMD_CREDENTIAL_SECRET=/x", "HOME=/root"])
        #expect(kept == ["PATH=/usr/bin:/bin", "SYSTEMD_CREDENTIAL_SECRET=/x"])
    }

    @Test func aPlainKeyFileNeedsNoTool() throws {
        let store = try TemporaryStore()
        let storage = try CredentialStorage(at: store.databaseURL, key: .keyFile(store.keyFileURL), rollbackAnchor: .directory(store.anchorDirectory))
        try storage.set(Credential(user: "u", password: "p"), for: Self.space)
        #expect(StoreFile.keyFileSeal(at: store.keyFileURL) == nil)
        let key = try StoreFiles.readKeyFile(store.keyFileURL, sealer: SystemdCreds(tool: nil))
        #expect(key.count == 32)
    }

    @Test(.enabled(if: SystemdCreds.system.tool != nil && (try? SystemdCreds.system.seal(SecureBytes.random(count: 32))) != nil,
                   "systemd-creds cannot seal here (not installed, or the host key is root's only)"))
    func aStoreCreatedSealedOpensWithItsKeyFileAndNotWithAnotherKey() throws {
        let store = try TemporaryStore()
        try StoreFile.createSealedKeyFile(at: store.keyFileURL)
        #expect(StoreFile.keyFileSeal(at: store.keyFileURL) == .systemdCreds)
        let created = try CredentialStorage(at: store.databaseURL, key: .keyFile(store.keyFileURL), rollbackAnchor: .directory(store.anchorDirectory))
        try created.set(Credential(user: "u", password: "p"), for: Self.space)
        let reopened = try CredentialStorage(at: store.databaseURL, key: .keyFile(store.keyFileURL), rollbackAnchor: .directory(store.anchorDirectory))
        #expect(try reopened.credentials(for: Self.space)["u"]?.password == "p")
        // A second sealed key file is another key: it does not open the store.
        let other = store.directory.appendingPathComponent("other.key")
        try StoreFile.createSealedKeyFile(at: other)
        let error = #expect(throws: CredentialStorageError.self) {
            try CredentialStorage(at: store.databaseURL, key: .keyFile(other), rollbackAnchor: .directory(store.anchorDirectory))
        }
        #expect(error?.code == .wrongKey)
        // Creating over an existing key file is refused, and leaves it as it was.
        let before = try Data(contentsOf: store.keyFileURL)
        #expect(throws: CredentialStorageError.self) { try StoreFile.createSealedKeyFile(at: store.keyFileURL) }
        #expect(try Data(contentsOf: store.keyFileURL) == before)
    }
}
