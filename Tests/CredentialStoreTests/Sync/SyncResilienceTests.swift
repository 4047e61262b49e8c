import Foundation
import GRDB
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Untrusting a device, imports that neither trap on hostile numbers
/// nor spend memory or CPU on a bundle before its signer and parameters are checked.
@Suite(.cheapKeyDerivation) struct SyncResilienceTests {
    let laptop: SyncPeer
    let desktop: SyncPeer
    let space = Fixture.space(realm: "API")

    init() throws {
        laptop = try SyncPeer()
        desktop = try SyncPeer()
    }


    // MARK: Finding 3: untrust

    @Test func anUntrustedDeviceIsNeitherReadNorWrittenTo() throws {
        try trust([laptop, desktop], [laptop, desktop])
        try laptop.storage.set(sync("alice", "before"), for: space)
        try desktop.storage.sync.importBundle(from: try laptop.export(to: [desktop]))

        let details = try desktop.storage.sync.trustedDevices()
        let laptopKey = try laptop.publicKey
        #expect(details.count == 1 && details.first?.key == laptopKey)
        #expect(details.first?.trusted != nil && details.first?.lastMerged != nil, "trusted and merged times: \(details)")

        #expect(try desktop.storage.maintenance.verify().isSound, "the merge time is sealed like the key")
        try desktop.storage.sync.untrust(try laptop.publicKey)
        #expect(try desktop.storage.sync.trustedDevices().map(\.key).isEmpty)
        #expect(try desktop.storage.maintenance.verify().isSound, "the removal is folded into the table seal")
        // Its bundles are refused from now on, and nothing changes.
        try laptop.storage.set(sync("alice", "after"), for: space)
        let before = try StoreSnapshot(desktop.storage)
        expectError(.bundleNotForThisStore) { try desktop.storage.sync.importBundle(from: try laptop.export(to: [desktop])) }
        #expect(try StoreSnapshot(desktop.storage) == before)
        #expect(try desktop.storage.credentials(for: space)["alice"]?.password == "before")
        // Untrusting a device not trusted is an error that names no key material.
        expectError(.notFound) { try desktop.storage.sync.untrust(try laptop.publicKey) }
        expectError(.invalidInput) { try DeviceKey("csdev1:nonsense") }
    }

    @Test func rekeyKeepsWhenADeviceWasTrustedAndLastMerged() throws {
        try trust([desktop], [laptop])
        try laptop.storage.set(sync("alice", "pw"), for: space)
        try desktop.storage.sync.importBundle(from: try laptop.export(to: [desktop]))
        let before = try desktop.storage.sync.trustedDevices()
        try desktop.storage.maintenance.rekey()
        #expect(try desktop.storage.sync.trustedDevices() == before)
        #expect(try desktop.storage.maintenance.verify().isSound)
    }

    // MARK: Finding 4: no arithmetic on stored or received values traps

    @Test func aClockCounterAtInt64MaxIsAnErrorNotATrap() throws {
        let now = nowMillis()
        for counter: Int64 in [.max, .max - 1, (1 << 40) - 1, -1] {
            expectError(.corrupt) { _ = try HybridTimestamp.tick(clock: (now + 60_000, counter), now: now) }
        }
        for counter: Int64 in [.max, .max - 1, (1 << 40) - 1] {
            let remote = HybridTimestamp(wall: now + 60_000, counter: 0, device: [UInt8](repeating: 0, count: 16))
            expectError(.corrupt) { _ = try HybridTimestamp.receive(clock: (now + 60_000, counter), remote: remote, now: now) }
        }
        let ticked = try HybridTimestamp.tick(clock: (now + 60_000, (1 << 40) - 2), now: now)
        #expect(ticked.wall == now + 60_000 && ticked.counter == (1 << 40) - 1)

        // The same through a store whose clock row was edited: the next synchronizable change fails
        // with an error (the stored clock is damaged), and the process goes on.
        try desktop.storage.set(sync("alice", "first"), for: space)
        // Edited as someone with write access to the file would (the seal notices it at the next
        // open; this instance is already open, so the arithmetic is what must not trap).
        try desktop.folder.rawDatabase().write {
            try $0.execute(sql: "UPDATE sync_clock SET wall = ?, counter = ?", arguments: [now + 3_600_000, Int64.max])
        }
        #expect(throws: CredentialStorageError.self) { try desktop.storage.set(sync("bob", "second"), for: space) }
        #expect(try desktop.storage.credentials(for: space)["bob"] == nil)
    }

    // MARK: Finding 5: resource bounds

    /// A passphrase-bundle header: magic, version, mode, salt, opslimit, memlimit, stream header
    /// and one empty-looking chunk, as an attacker writes it in a few bytes.
    private func passphraseHeader(ops: Int64, mem: Int64) throws -> URL {
        var writer = ByteWriter()
        writer.append(raw: BundleFormat.magic)
        writer.append(BundleFormat.version)
        writer.append(UInt8(1))
        writer.append(raw: [UInt8](repeating: 7, count: Sodium.passwordSaltBytes))
        writer.append(ops)
        writer.append(mem)
        writer.append(raw: [UInt8](repeating: 9, count: Sodium.streamHeaderBytes))
        writer.append(raw: [0, 0, 0, 17] + [UInt8](repeating: 1, count: 17))
        let url = desktop.file("header-\(UUID().uuidString).csbundle")
        try Data(writer.bytes).write(to: url)
        return url
    }

    @Test func keyDerivationAskingForMoreThanExportUsesIsRefusedBeforeDerivation() throws {
        let cost = Sodium.bundlePasswordCost
        // More passes than export writes, with little memory (cheap to derive, had it been).
        for (ops, mem) in [(Int64(cost.opsLimit) + 1, Int64(8192)), (16, 8192), (0, 8192), (1, 8191)] {
            expectError(.invalidBundle) { try desktop.storage.sync.importBundle(from: try passphraseHeader(ops: ops, mem: mem), passphrase: "pw") }
        }
        // More memory than export writes: refused by reading the header alone. (docs/reliability.md
        // measures a header asking for 4 GiB; a test must not risk allocating that.)
        for mem in [Int64(cost.memLimit) + 1024, Int64.max] {
            expectError(.invalidBundle) { try desktop.storage.sync.importBundle(from: try passphraseHeader(ops: 1, mem: mem), passphrase: "pw") }
        }
        // What export writes is still read: the same header with export's cost gets as far as
        // the passphrase.
        expectError(.wrongKey) {
            try desktop.storage.sync.importBundle(from: try passphraseHeader(ops: 1, mem: 8192), passphrase: "pw")
        }
    }

    @Test func anUntrustedSignerIsRefusedBeforeAnyItemIsDecrypted() throws {
        // Not trusted: the refusal must come from the metadata, before the (damaged) items.
        try laptop.storage.set(sync("alice", "pw"), for: space)
        let url = try laptop.export(to: [desktop])
        var bytes = [UInt8](try Data(contentsOf: url))
        bytes[bytes.count - 40] ^= 0x01
        try Data(bytes).write(to: url)
        expectError(.bundleNotForThisStore) { try desktop.storage.sync.importBundle(from: url) }
    }

    @Test func aFolderIsRefusedAsNotABundle() throws {
        let folder = desktop.file("folder-\(UUID().uuidString).csbundle")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        expectError(.invalidBundle) { try desktop.storage.sync.importBundle(from: folder) }
    }

    @Test func aFIFOOrADeviceIsRefusedWithoutReadingIt() throws {
        let fifo = desktop.file("fifo-\(UUID().uuidString).csbundle")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        expectError(.invalidBundle) { try desktop.storage.sync.importBundle(from: fifo) }
        let zero = desktop.file("zero-\(UUID().uuidString).csbundle")
        try FileManager.default.createSymbolicLink(atPath: zero.path, withDestinationPath: "/dev/zero")
        expectError(.invalidBundle) { try desktop.storage.sync.importBundle(from: zero) }
    }

    @Test func aLargeSparseFileIsRefusedFromItsFirstBytes() throws {
        // 1.5 GB that occupies no disk: refused after its magic, without reading the rest.
        let url = desktop.file("sparse-\(UUID().uuidString).csbundle")
        #expect(FileManager.default.createFile(atPath: url.path, contents: Data("CSBUNDLE".utf8)))
        #expect(truncate(url.path, 1_500_000_000) == 0)
        expectError(.invalidBundle) { try desktop.storage.sync.importBundle(from: url) }
    }

    @Test func anItemOverTheSizeLimitIsRefusedOnSetAndOnImport() throws {
        try trust([desktop], [laptop])
        let huge = String(repeating: "x", count: BundleFormat.maximumItemBytes)
        // The store never takes a credential a bundle cannot carry, so no export is ever blocked by one.
        expectError(.invalidInput, secrets: [huge]) { try laptop.storage.set(sync("alice", huge), for: space) }

        // A bundle forged past the limit is refused by the reader, and changes nothing.
        let url = laptop.file("huge-\(UUID().uuidString).csbundle")
        try laptop.storage.writeBundle(
            [SignedBundleItem(space: space, user: "alice", password: huge, wall: nowMillis())], for: [desktop.publicKey], itemLimit: .max, to: url)
        expectError(.invalidBundle) { try desktop.storage.sync.importBundle(from: url) }
        #expect(try desktop.storage.credentials(for: space).isEmpty)
    }

    @Test func manyItemsTravelInChunksCutBySize() throws {
        try trust([desktop], [laptop])
        // Items of 100 KiB: a chunk is cut well before 1024 of them, so every chunk stays small,
        // and all of them still arrive.
        let big = String(repeating: "p", count: 100 << 10)
        for index in 0..<30 { try laptop.storage.set(sync("user\(index)", big + "\(index)"), for: space) }
        let report = try desktop.storage.sync.importBundle(from: try laptop.export(to: [desktop]))
        #expect(report == ImportReport(added: 30))
        #expect(try desktop.storage.credentials(for: space)["user29"]?.password == big + "29")
    }
}
