import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// docs/contract.md ("Sync between machines"): any flipped, truncated or appended byte, a bundle for another recipient, an untrusted
/// signer, a wrong passphrase or a newer format is refused with the right error code, and the
/// importing store is left exactly as it was.
@Suite(.cheapKeyDerivation) struct SyncTamperTests {
    /// The exporting store, trusted by the importer.
    let sender: SyncPeer
    /// The importing store, with credentials of every tier of its own.
    let receiver: SyncPeer
    /// Another store, trusted by no one: a second recipient, or a signer the receiver does not trust.
    let stranger: SyncPeer
    let space = Fixture.space(realm: "API")
    let otherSpace = Fixture.space("git.example.org")

    init() throws {
        sender = try SyncPeer()
        receiver = try SyncPeer()
        stranger = try SyncPeer()
        try receiver.storage.sync.trust(try sender.publicKey)

        let a = sender.storage
        try a.set(Credential(user: "alice", password: "alice-secret", persistence: .synchronizable), for: space)
        try a.set(Credential(user: "bob", password: "bob-secret", persistence: .synchronizable), for: space)
        try a.setDefaultCredential(Credential(user: "bob", password: "bob-secret", persistence: .synchronizable), for: space)
        try a.set(Credential(user: "carol", password: "carol-secret", persistence: .synchronizable), for: otherSpace)

        let b = receiver.storage
        try b.set(Credential(user: "alice", password: "receiver-old", persistence: .synchronizable), for: space)
        try b.set(Credential(user: "perm", password: "receiver-perm", persistence: .permanent), for: otherSpace)
        try b.set(Credential(user: "sess", password: "receiver-session", persistence: .forSession), for: otherSpace)
    }

    // MARK: Helpers

    /// Where the parts of a recipient-mode bundle are.
    struct Layout {
        var recipientCount: Int
        var headerLength: Int
        /// Each chunk's bytes, from its 4-byte length to its end.
        var chunks: [Range<Int>]

        init(_ bytes: [UInt8]) {
            recipientCount = Int(bytes[10]) << 8 | Int(bytes[11])
            headerLength = 8 + 1 + 1 + 2 + recipientCount * 88 + 24
            chunks = []
            var position = headerLength
            while position + 4 <= bytes.count {
                let length = bytes[position..<position + 4].reduce(0) { $0 << 8 | Int($1) }
                chunks.append(position..<min(position + 4 + length, bytes.count))
                position += 4 + length
            }
        }

        /// The offset of recipient `index`'s key id (its sealed file key follows, 80 bytes).
        func stanza(_ index: Int) -> Int { 12 + index * 88 }
    }

    /// A recipient-mode bundle from the sender, for `recipients` (the receiver by default).
    private func recipientBundle(_ recipients: [SyncPeer]? = nil) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: try sender.export(to: recipients ?? [receiver])))
    }

    /// Imports `bytes` into the receiver, expecting `code`; the receiver must be unchanged.
    private func expectRefused(
        _ bytes: [UInt8], _ code: CredentialStorageError.Code, _ what: String, passphrase: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let url = receiver.file("tampered-\(UUID().uuidString).csbundle")
        try Data(bytes).write(to: url)
        let before = try StoreSnapshot(receiver.storage)
        do {
            let report = try receiver.storage.sync.importBundle(from: url, passphrase: passphrase)
            Issue.record("\(what): accepted (\(report)), expected \(code)", sourceLocation: sourceLocation)
        } catch let error as CredentialStorageError {
            #expect(error.code == code, "\(what): \(error.code) — \(error.message)", sourceLocation: sourceLocation)
            for secret in ["alice-secret", "bob-secret", "carol-secret", "Tr0ub4dor&3-bundle"] {
                #expect(!error.message.contains(secret), "\(what): the message leaks a secret", sourceLocation: sourceLocation)
            }
        }
        #expect(try StoreSnapshot(receiver.storage) == before, "\(what): the store changed", sourceLocation: sourceLocation)
        try? FileManager.default.removeItem(at: url)
    }

    private func flipped(_ bytes: [UInt8], at offset: Int, with mask: UInt8 = 0x01) -> [UInt8] {
        var copy = bytes
        copy[offset] ^= mask
        return copy
    }

    // MARK: Sanity

    @Test func theUntamperedBundleImportsAndTheLayoutIsAsDocumented() throws {
        let bytes = try recipientBundle([receiver, stranger])
        let layout = Layout(bytes)
        #expect(Array(bytes[0..<8]) == Array("CSBUNDLE".utf8))
        #expect(bytes[8] == 4 && bytes[9] == 2, "version 4, recipient mode")
        #expect(layout.recipientCount == 2)
        #expect(layout.chunks.count == 4, "metadata, items, defaults, final")
        #expect(layout.chunks.last?.upperBound == bytes.count, "the chunks end at the end of the file")
        let url = receiver.file("clean.csbundle")
        try Data(bytes).write(to: url)
        #expect(try receiver.storage.sync.importBundle(from: url) == ImportReport(added: 2, unchanged: 1), "the receiver's own alice is newer")
    }

    // MARK: Flipped bytes

    @Test func aFlippedHeaderByteIsRefused() throws {
        // The receiver's stanza comes second, so the reader walks past a foreign one first.
        let bytes = try recipientBundle([stranger, receiver])
        let layout = Layout(bytes)
        let foreign = layout.stanza(0), own = layout.stanza(1)
        let cases: [(String, Int, CredentialStorageError.Code)] = [
            ("magic, first byte", 0, .invalidBundle),
            ("magic, last byte", 7, .invalidBundle),
            // Version 4 with its lowest bit flipped is 5, newer than credstore reads.
            ("version 4 → 5", 8, .unsupportedFormatVersion),
            ("mode 2 → 3", 9, .invalidBundle),
            ("recipient count 2 → 3", 11, .invalidBundle),
            ("a foreign stanza's key id", foreign, .invalidBundle),
            ("a foreign stanza's sealed key", foreign + 8 + 40, .invalidBundle),
            // The receiver no longer finds its key id: to it, the bundle is someone else's.
            ("this store's key id", own, .bundleNotForThisStore),
            ("this store's key id, last byte", own + 7, .bundleNotForThisStore),
            ("this store's sealed key, first byte", own + 8, .invalidBundle),
            ("this store's sealed key, last byte", own + 87, .invalidBundle),
            ("the stream header, first byte", layout.headerLength - 24, .invalidBundle),
            ("the stream header, last byte", layout.headerLength - 1, .invalidBundle),
        ]
        for (what, offset, code) in cases {
            try expectRefused(flipped(bytes, at: offset), code, what)
        }
        // Version 4 made 3: a format credstore reads, but the header is authenticated with the
        // first chunk, so the change is caught there.
        try expectRefused(flipped(bytes, at: 8, with: 0x07), .invalidBundle, "version 4 → 3")
        // The mode byte turned into passphrase mode reads stanza bytes as key-derivation parameters.
        try expectRefused(flipped(bytes, at: 9, with: 0x03), .invalidBundle, "mode 2 → 1")
        try expectRefused(flipped(bytes, at: 10, with: 0x80), .invalidBundle, "recipient count 2 → 32770")
        try expectRefused(flipped(bytes, at: 11, with: 0x02), .invalidBundle, "recipient count 2 → 0")
    }

    @Test func aFlippedBodyByteIsRefused() throws {
        let bytes = try recipientBundle()
        let layout = Layout(bytes)
        try #require(layout.chunks.count == 4)
        let (metadata, items, defaults, final) = (layout.chunks[0], layout.chunks[1], layout.chunks[2], layout.chunks[3])
        let cases: [(String, Int)] = [
            ("the metadata chunk's length", metadata.lowerBound + 3),
            ("the metadata chunk", metadata.lowerBound + 4 + 20),
            ("the items chunk's length", items.lowerBound + 2),
            ("the items chunk, first byte", items.lowerBound + 4),
            ("the items chunk, middle", (items.lowerBound + items.upperBound) / 2),
            ("the items chunk, its MAC", items.upperBound - 1),
            ("the defaults chunk", defaults.lowerBound + 4 + 5),
            ("the final chunk's length", final.lowerBound + 3),
            ("the final chunk's tag byte", final.lowerBound + 4),
            ("the final chunk's signature", final.lowerBound + 4 + 17 + 30),
            ("the last byte of the file", bytes.count - 1),
        ]
        for (what, offset) in cases {
            try expectRefused(flipped(bytes, at: offset), .invalidBundle, what)
            try expectRefused(flipped(bytes, at: offset, with: 0xFF), .invalidBundle, what + " (all bits)")
        }
    }

    @Test func everySingleBitFlipAnywhereIsRefused() throws {
        let bytes = try recipientBundle()
        let layout = Layout(bytes)
        let ownKeyID = layout.stanza(0)..<layout.stanza(0) + 8
        let url = receiver.file("flip.csbundle")
        let before = try StoreSnapshot(receiver.storage)
        var accepted: [Int] = []
        var wrongCode: [String] = []
        for offset in bytes.indices {
            let bit = UInt8(1) << UInt8(offset % 8)
            try Data(flipped(bytes, at: offset, with: bit)).write(to: url)
            // The version byte's flipped bit makes 5, a newer format than credstore reads.
            let expected: CredentialStorageError.Code = ownKeyID.contains(offset) ? .bundleNotForThisStore
                : offset == 8 ? .unsupportedFormatVersion : .invalidBundle
            do {
                _ = try receiver.storage.sync.importBundle(from: url)
                accepted.append(offset)
            } catch let error as CredentialStorageError where error.code == expected {
            } catch {
                wrongCode.append("\(offset): \(error)")
            }
        }
        #expect(accepted.isEmpty, "flips accepted at offsets \(accepted)")
        #expect(wrongCode.isEmpty, "\(wrongCode)")
        #expect(try StoreSnapshot(receiver.storage) == before)
    }

    // MARK: Truncated and appended bytes

    @Test func aTruncatedBundleIsRefused() throws {
        let bytes = try recipientBundle()
        let layout = Layout(bytes)
        let final = layout.chunks.last!
        let cuts: [(String, Int)] = [
            ("an empty file", 0),
            ("inside the magic", 5),
            ("after the magic", 8),
            ("after the version", 9),
            ("after the mode", 10),
            ("inside the recipient count", 11),
            ("inside the key id", 15),
            ("inside the sealed key", 60),
            ("inside the stream header", layout.headerLength - 10),
            ("right after the header", layout.headerLength),
            ("inside the first chunk's length", layout.headerLength + 2),
            ("inside the first chunk", layout.headerLength + 20),
            ("between two chunks", layout.chunks[1].lowerBound),
            ("inside the items chunk", layout.chunks[1].lowerBound + 40),
            ("right before the final chunk", final.lowerBound),
            ("inside the final chunk's length", final.lowerBound + 3),
            ("inside the final chunk", final.lowerBound + 30),
            ("one byte short", bytes.count - 1),
        ]
        for (what, cut) in cuts {
            try expectRefused(Array(bytes[0..<cut]), .invalidBundle, "cut \(what) (\(cut) of \(bytes.count) bytes)")
        }
    }

    @Test func everyTruncationIsRefused() throws {
        let bytes = try recipientBundle()
        let url = receiver.file("cut.csbundle")
        let before = try StoreSnapshot(receiver.storage)
        var failures: [String] = []
        for cut in 0..<bytes.count {
            try Data(bytes[0..<cut]).write(to: url)
            do {
                _ = try receiver.storage.sync.importBundle(from: url)
                failures.append("\(cut): accepted")
            } catch let error as CredentialStorageError where error.code == .invalidBundle {
            } catch {
                failures.append("\(cut): \(error)")
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        #expect(try StoreSnapshot(receiver.storage) == before)
    }

    @Test func appendedBytesAreRefused() throws {
        let bytes = try recipientBundle()
        let layout = Layout(bytes)
        let final = Array(bytes[layout.chunks.last!])
        let cases: [(String, [UInt8])] = [
            ("one zero byte", [0]),
            ("one byte", [0x46]),
            ("an empty chunk length", [0, 0, 0, 0]),
            ("a copy of the final chunk", final),
            ("the whole bundle again", bytes),
            ("a kilobyte of zeros", [UInt8](repeating: 0, count: 1024)),
        ]
        for (what, tail) in cases {
            try expectRefused(bytes + tail, .invalidBundle, "appended \(what)")
        }
    }

    @Test func reorderedDroppedOrRepeatedChunksAreRefused() throws {
        let bytes = try recipientBundle()
        let layout = Layout(bytes)
        try #require(layout.chunks.count == 4)
        let header = Array(bytes[0..<layout.headerLength])
        let chunk = layout.chunks.map { Array(bytes[$0]) }
        let cases: [(String, [[UInt8]])] = [
            ("without the items chunk", [chunk[0], chunk[2], chunk[3]]),
            ("without the defaults chunk", [chunk[0], chunk[1], chunk[3]]),
            ("without the final chunk", [chunk[0], chunk[1], chunk[2]]),
            ("items and defaults swapped", [chunk[0], chunk[2], chunk[1], chunk[3]]),
            ("the items chunk twice", [chunk[0], chunk[1], chunk[1], chunk[2], chunk[3]]),
            ("without the metadata chunk", [chunk[1], chunk[2], chunk[3]]),
            ("the final chunk first", [chunk[3], chunk[0], chunk[1], chunk[2]]),
        ]
        for (what, chunks) in cases {
            try expectRefused(header + chunks.flatMap { $0 }, .invalidBundle, what)
        }
        // The body of one bundle behind the header of another, both for this store.
        let other = try recipientBundle()
        let otherLayout = Layout(other)
        try expectRefused(Array(other[0..<otherLayout.headerLength]) + Array(bytes[layout.headerLength...]), .invalidBundle, "another bundle's header")
    }

    // MARK: Versions, recipients, signers

    @Test func aBundleOfANewerFormatVersionIsRefusedAsUnsupported() throws {
        var bytes = try recipientBundle()
        for version: UInt8 in [5, 255] {
            bytes[8] = version
            try expectRefused(bytes, .unsupportedFormatVersion, "version \(version)")
        }
    }

    @Test func aBundleForAnotherRecipientIsRefused() throws {
        try expectRefused(try recipientBundle([stranger]), .bundleNotForThisStore, "a bundle for another store")
        try expectRefused(try recipientBundle([stranger, sender]), .bundleNotForThisStore, "a bundle for two other stores")
    }

    @Test func aBundleFromAnUntrustedSignerIsRefused() throws {
        try stranger.storage.set(Credential(user: "mallory", password: "mallory-secret", persistence: .synchronizable), for: space)
        let url = try stranger.export(to: [receiver])
        try expectRefused([UInt8](try Data(contentsOf: url)), .bundleNotForThisStore, "an untrusted signer")
        let before = try StoreSnapshot(receiver.storage)
        expectError(.bundleNotForThisStore) { try receiver.storage.sync.importBundle(from: url, dryRun: true) }
        #expect(try StoreSnapshot(receiver.storage) == before)
    }

    @Test func aCoRecipientCannotRewriteATrustedSendersBundle() throws {
        // The stranger also received the sender's bundle, so it can open it and write a new one
        // for the receiver; it cannot sign it as the sender.
        let original = try sender.export(to: [receiver, stranger])
        var contents = try stranger.decode(original)
        contents.items = contents.items.map { item in
            var item = item
            if item.user == "alice" { item.password = "mallory-was-here" }
            return item
        }
        let strangerDevice = try stranger.storage.deviceIdentity()
        let receiverKey = try receiver.storage.deviceIdentity().publicKey
        let claimingSender = try BundleFormat.write(contents, protection: .recipients([receiverKey]), signer: strangerDevice)
        try expectRefused(claimingSender, .invalidBundle, "re-signed by a co-recipient under the sender's name")

        contents.signer = strangerDevice.publicKey
        let ownName = try BundleFormat.write(contents, protection: .recipients([receiverKey]), signer: strangerDevice)
        try expectRefused(ownName, .bundleNotForThisStore, "re-signed by a co-recipient under its own name")
    }

    // MARK: Passphrase mode (Argon2id, 512 MiB: kept to one test)

    @Test func passphraseBundlesRefuseAWrongPassphraseAndDamage() throws {
        let url = sender.file("pass.csbundle")
        try sender.storage.sync.export(to: url, protection: .passphrase("Tr0ub4dor&3-bundle"))
        let bytes = [UInt8](try Data(contentsOf: url))
        #expect(bytes[9] == 1, "passphrase mode")
        let headerLength = 8 + 1 + 1 + 16 + 8 + 8 + 24

        try expectRefused(bytes, .wrongKey, "a wrong passphrase", passphrase: "Tr0ub4dor&3-bundl")
        try expectRefused(bytes, .wrongKey, "no passphrase: a key missing, as a wrong one")
        // Cheap checks, before any key derivation.
        try expectRefused(flipped(bytes, at: 0), .invalidBundle, "magic", passphrase: "Tr0ub4dor&3-bundle")
        try expectRefused(flipped(bytes, at: 26, with: 0x80), .invalidBundle, "an absurd opslimit", passphrase: "Tr0ub4dor&3-bundle")
        try expectRefused(Array(bytes[0..<30]), .invalidBundle, "cut inside the parameters", passphrase: "Tr0ub4dor&3-bundle")
        // A changed salt derives another key: indistinguishable from a wrong passphrase, by design.
        try expectRefused(flipped(bytes, at: 12), .wrongKey, "a flipped salt byte", passphrase: "Tr0ub4dor&3-bundle")
        // With the right passphrase, a bundle that stops right after its header is plainly truncated.
        try expectRefused(Array(bytes[0..<headerLength]), .invalidBundle, "cut right after the header", passphrase: "Tr0ub4dor&3-bundle")
    }
}
