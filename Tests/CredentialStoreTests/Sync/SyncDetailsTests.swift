import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStoreTestSupport

/// A credential's details (expiry, refresh token, label, comment, attributes) travel in bundles of
/// format 2, and bundles of format 1 (without them) still import.
@Suite struct SyncDetailsTests {
    let space = ProtectionSpace(host: "git.example.com", port: 443, protocol: "https", realm: nil)
    static let detailed = Credential(
        user: "alice", password: "gho_token", persistence: .synchronizable, expires: Date(timeIntervalSince1970: 4_102_444_800),
        refreshToken: "rt-canary-7f3e", label: "label-canary", comment: "comment-canary", attributes: ["attr-name-canary": "attr-value-canary"])

    @Test func everyDetailTravelsAndNoneIsInTheClearInTheBundle() throws {
        let (sender, receiver) = (try SyncPeer(), try SyncPeer())
        try trust([receiver], [sender])
        try sender.storage.set(Self.detailed, for: space)
        let url = try sender.export(to: [receiver])
        let bytes = try Data(contentsOf: url)
        for canary in ["rt-canary-7f3e", "label-canary", "comment-canary", "attr-name-canary", "attr-value-canary"] {
            #expect(bytes.range(of: Data(canary.utf8)) == nil, "\(canary) in the bundle")
        }
        #expect(try receiver.storage.sync.importBundle(from: url).added == 1)
        #expect(try receiver.storage.credentials(for: space)["alice"] == Self.detailed)
    }

    @Test func aChangeOfALabelAloneIsANewVersionThatTravels() throws {
        let (sender, receiver) = (try SyncPeer(), try SyncPeer())
        try trust([receiver], [sender])
        try sender.storage.set(Self.detailed, for: space)
        try receiver.storage.sync.importBundle(from: try sender.export(to: [receiver]))
        var relabelled = Self.detailed
        relabelled.label = "renamed"
        relabelled.attributes["extra"] = "1"
        try sender.storage.set(relabelled, for: space)
        #expect(try receiver.storage.sync.importBundle(from: try sender.export(to: [receiver])).updated == 1)
        #expect(try receiver.storage.credentials(for: space)["alice"] == relabelled)
    }

    @Test func aBundleOfFormatOneStillImports() throws {
        let (sender, receiver) = (try SyncPeer(), try SyncPeer())
        try trust([receiver], [sender])
        try sender.storage.set(Credential(user: "bob", password: "old-format", persistence: .synchronizable), for: space)
        let contents = try receiver.decode(try sender.export(to: [receiver]))
        let bytes = try BundleFormat.write(
            contents, protection: .recipients([try receiver.publicKey]), signer: try sender.storage.deviceIdentity(), formatVersion: 1)
        #expect(bytes[8] == 1)
        let url = sender.file("format-1.csbundle")
        try Data(bytes).write(to: url)
        #expect(try receiver.storage.sync.importBundle(from: url).added == 1)
        #expect(try receiver.storage.credentials(for: space)["bob"] == Credential(user: "bob", password: "old-format", persistence: .synchronizable))
    }

    /// A bundle of format 3 (before bundles said what their writer merged) still imports, and
    /// tells the reader nothing about which of its bundles the writer holds.
    @Test func aBundleOfFormatThreeStillImportsAndCarriesNoMergeNotes() throws {
        let (sender, receiver) = (try SyncPeer(), try SyncPeer())
        try trust([receiver, sender], [sender, receiver])
        try receiver.storage.set(Credential(user: "carol", password: "pw", persistence: .synchronizable), for: space)
        try sender.storage.sync.importBundle(from: receiver.export(to: [sender]))
        let current = try receiver.decode(try sender.export(to: [receiver]))
        #expect(current.merged.map(\.device) == [try receiver.publicKey], "format 4 says the sender merged the receiver's bundle")
        let bytes = try BundleFormat.write(
            current, protection: .recipients([try receiver.publicKey]), signer: try sender.storage.deviceIdentity(), formatVersion: 3)
        #expect(bytes[8] == 3)
        let url = sender.file("format-3.csbundle")
        try Data(bytes).write(to: url)
        #expect(try receiver.storage.sync.importBundle(from: url).unchanged == 1)
        #expect(try receiver.decode(url).merged.isEmpty)
    }

    @Test func detailsThatDoNotDecodeOrBreakTheRulesAreRefusedAndNothingChanges() throws {
        let (sender, receiver) = (try SyncPeer(), try SyncPeer())
        try trust([receiver], [sender])
        try sender.storage.set(Credential(user: "carol", password: "pw", persistence: .synchronizable), for: space)
        var contents = try receiver.decode(try sender.export(to: [receiver]))
        for details in [[0x01, 0x09, 0x00] as [UInt8], [0x07]] {
            contents.items[0].details = details
            let bytes = try BundleFormat.write(contents, protection: .recipients([try receiver.publicKey]), signer: try sender.storage.deviceIdentity())
            let url = sender.file("bad-\(details.count).csbundle")
            try Data(bytes).write(to: url)
            let error = #expect(throws: CredentialStorageError.self) { try receiver.storage.sync.importBundle(from: url) }
            #expect(error?.code == .invalidBundle)
            #expect(try receiver.storage.credentials(for: space).isEmpty)
        }
        // Details that decode but break a rule `set` applies: each refused as bad input (65 in
        // the CLI) with the rule in the message, never taken for a missing passphrase.
        let manyAttributes = Dictionary(uniqueKeysWithValues: (0...Credential.maximumAttributeCount).map { ("a\($0)", "v") })
        let broken: [(Credential, String)] = [
            (Credential(user: "carol", password: "pw", refreshToken: "t\nhost=evil"), "refresh token"),
            (Credential(user: "carol", password: "pw", label: "one\ntwo"), "label"),
            (Credential(user: "carol", password: "pw", attributes: ["a=b": "v"]), "attribute name"),
            (Credential(user: "carol", password: "pw", attributes: manyAttributes), "\(Credential.maximumAttributeCount) attributes"),
        ]
        for (credential, rule) in broken {
            var writer = ByteWriter()
            StoreKeyring.appendDetails(of: credential, to: &writer)
            contents.items[0].details = writer.bytes
            let bytes = try BundleFormat.write(contents, protection: .recipients([try receiver.publicKey]), signer: try sender.storage.deviceIdentity())
            let url = sender.file("injected.csbundle")
            try Data(bytes).write(to: url)
            let error = #expect(throws: CredentialStorageError.self, "\(rule)") { try receiver.storage.sync.importBundle(from: url) }
            #expect(error?.code == .invalidInput, "\(rule)")
            #expect(error?.message.contains(rule) == true, "\(rule): \(error?.message ?? "")")
            #expect(try receiver.storage.credentials(for: space).isEmpty)
        }
    }
}
