@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStoreTestSupport
import Foundation
import GRDB
import Testing

/// What a program gets: a passphrase store and a passphrase bundle record the documented Argon2id
/// costs (MODERATE for a store, 4 passes over 512 MiB for a bundle), and only a test that asks for
/// a token cost (`.cheapKeyDerivation`, which the other suites use) gets it.
///
/// These tests derive at the full cost on purpose, a few seconds and 512 MiB in all.
@Suite struct KeyDerivationCostTests {
    let store: TemporaryStore
    let space = Fixture.space("api.example.com", realm: "API")

    init() throws {
        store = try TemporaryStore()
    }

    /// The Argon2id cost the store's passphrase slot records.
    private func slotCost() throws -> (ops: Int64, mem: Int64) {
        try store.rawDatabase().read { db in
            let row = try #require(try Row.fetchOne(db, sql: "SELECT kdf_opslimit, kdf_memlimit FROM key_slots WHERE kind = 'passphrase'"))
            return (row[0], row[1])
        }
    }

    /// The Argon2id cost a passphrase bundle's header records, after its magic, version, mode and salt.
    private func bundleCost(_ url: URL) throws -> (ops: Int64, mem: Int64) {
        var reader = ByteReader([UInt8](try Data(contentsOf: url)))
        _ = try reader.readRaw(count: BundleFormat.magic.count + 2 + Sodium.passwordSaltBytes)
        return (try reader.readInt64(), try reader.readInt64())
    }

    private func makeStoreAndBundle() throws -> (slot: (ops: Int64, mem: Int64), bundle: (ops: Int64, mem: Int64)) {
        let url = store.directory.appendingPathComponent("cost.csbundle")
        do {
            let storage = try CredentialStorage(at: store.databaseURL, key: .passphrase("correct horse battery"),
                                                rollbackAnchor: .directory(store.anchorDirectory))
            var credential = Fixture.credential("alice", "pw")
            credential.persistence = .synchronizable
            try storage.set(credential, for: space)
            #expect(try storage.sync.export(to: url, protection: .passphrase("bundle passphrase")))
        }
        store.waitUntilClosed()
        return (try slotCost(), try bundleCost(url))
    }

    @Test func aStoreAndABundleRecordTheDocumentedCost() throws {
        let (slot, bundle) = try makeStoreAndBundle()
        #expect(slot.ops == 3 && slot.mem == 256 << 20, "libsodium's MODERATE: 3 passes over 256 MiB")
        #expect(bundle.ops == 4 && bundle.mem == 512 << 20)
    }

    /// The trait the other suites use does lower the cost, or their run would silently take minutes more.
    @Test(.cheapKeyDerivation) func theTestTraitRecordsItsTokenCost() throws {
        let (slot, bundle) = try makeStoreAndBundle()
        #expect(slot.ops == 2 && slot.mem == 16 << 10)
        #expect(bundle.ops == 2 && bundle.mem == 16 << 10)
    }

    /// The release build CI ships (`CREDSTORE_CLI_UNDER_TEST` names its `credstore`), whose
    /// module files sit beside it; nil where there is none, as in a plain `swift test`.
    static let releaseModules: URL? = ProcessInfo.processInfo.environment["CREDSTORE_CLI_UNDER_TEST"]
        .map { URL(fileURLWithPath: $0).deletingLastPathComponent().appendingPathComponent("Modules") }
        .flatMap { FileManager.default.fileExists(atPath: $0.appendingPathComponent("CredentialStore.swiftmodule").path) ? $0 : nil }

    /// A program built on a release build of the library cannot reach the override: the
    /// compiler refuses every way in (the public module, the internal one it is declared in,
    /// `@testable`), while the same program using the public API compiles. Nothing else sets it:
    /// the library's sources name it only where it is declared, so no environment variable,
    /// file or argument leads to it.
    @Test(.enabled(if: releaseModules != nil, "needs the release build (CI's test step names it)"))
    func aReleaseBuildOfTheLibraryOffersNoWayToLowerTheCost() throws {
        let modules = try #require(Self.releaseModules)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let scratch = modules.deletingLastPathComponent().deletingLastPathComponent()
        let maps = [
            root.appendingPathComponent("Sources/CLinux/module.modulemap"),
            root.appendingPathComponent("Sources/CSodium/module.modulemap"),
            scratch.appendingPathComponent("checkouts/GRDB.swift/Sources/GRDBSQLite/module.modulemap"),
        ]
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cost-probe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func typecheck(_ source: String) throws -> ProcessOutput {
            let file = folder.appendingPathComponent("Probe.swift")
            try source.write(to: file, atomically: true, encoding: .utf8)
            return try runProcess(URL(fileURLWithPath: "/usr/bin/env"),
                                  ["swiftc", "-typecheck", file.path, "-I", modules.path] + maps.flatMap { ["-Xcc", "-fmodule-map-file=\($0.path)"] })
        }
        let lower = "Sodium.PasswordHashCost.$overrideForNewKeys.withValue(.forTests) { }"
        let control = try typecheck("import CredentialStore\nimport Foundation\nfunc f() throws { _ = try CredentialStorage(at: StoreLocation(databaseURL: URL(fileURLWithPath: \"/tmp/s\")), key: .passphrase(\"p\")) }\n")
        #expect(control.status == 0, "the probe's own set-up must compile: \(control.stderr)")
        for (imports, refusal) in [
            ("import CredentialStore", "cannot find 'Sodium' in scope"),
            ("import CredentialStoreCrypto", "cannot find 'Sodium' in scope"),
            ("@testable import CredentialStoreCrypto", "was not compiled for testing"),
            ("@testable import CredentialStore", "was not compiled for testing"),
        ] {
            let probe = try typecheck("\(imports)\nfunc f() { \(lower) }\n")
            #expect(probe.status != 0 && probe.stderr.contains(refusal), "\(imports): \(probe.stderr)")
        }
        let sources = try #require(FileManager.default.enumerator(at: root.appendingPathComponent("Sources"), includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        let naming = try sources.filter { try String(contentsOf: $0, encoding: .utf8).contains("overrideForNewKeys") }
        #expect(naming.map(\.lastPathComponent) == ["Sodium+NewKeyCost.swift"])
    }
}
