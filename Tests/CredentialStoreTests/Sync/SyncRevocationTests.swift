import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStoreTestSupport

/// docs/sync-format.md, "Revocation": an untrust made on one machine reaches every machine that
/// trusts it, through the bundles, and the revoked device reads nothing written after it.
@Suite(.cheapKeyDerivation) struct SyncRevocationTests {
    let space = ProtectionSpace(host: "vault.example.com", port: 443, protocol: "https", realm: nil)

    /// Three machines that trust one another and share one folder, as `credstore sync` uses it.
    final class Fleet {
        let a: SyncPeer, b: SyncPeer, c: SyncPeer
        let folder: TemporaryStore

        init() throws {
            (a, b, c) = (try SyncPeer(), try SyncPeer(), try SyncPeer())
            folder = try TemporaryStore()
            try FileManager.default.createDirectory(at: folder.directory, withIntermediateDirectories: true)
            try trust([a, b, c], [a, b, c])
        }

        /// One `sync` of `peer`: merges every other bundle in the folder it can (skipping, as
        /// sync does, what is not for it), then writes its own, sealed to what it trusts.
        @discardableResult
        func sync(_ peer: SyncPeer) throws -> [ImportReport] {
            let own = try peer.storage.sync.deviceID + ".csbundle"
            var reports: [ImportReport] = []
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.directory.path).sorted().filter { $0.hasSuffix(".csbundle") && $0 != own }
            // As `credstore sync` does: every revocation in the folder first.
            var first = ImportReport()
            first.revocations = try peer.storage.sync.applyRevocations(fromBundlesAt: names.map { folder.directory.appendingPathComponent($0) })
            reports.append(first)
            for name in names {
                do {
                    reports.append(try peer.storage.sync.importBundle(from: folder.directory.appendingPathComponent(name)))
                } catch let error as CredentialStorageError where error.code == .bundleNotForThisStore {
                    continue
                }
            }
            try peer.storage.sync.export(
                to: folder.directory.appendingPathComponent(own),
                protection: .recipients(try peer.storage.sync.trustedDevices().map(\.key) + [peer.storage.sync.deviceKey]))
            return reports
        }

        /// The bundle `writer` last wrote to the folder.
        func bundle(of writer: SyncPeer) throws -> URL {
            folder.directory.appendingPathComponent(try writer.storage.sync.deviceID + ".csbundle")
        }
    }

    @Test func anUntrustOnOneMachineReachesTheFleetAndTheRevokedDeviceReadsNothingNew() throws {
        let fleet = try Fleet()
        let (a, b, c) = (fleet.a, fleet.b, fleet.c)
        try a.storage.set(sync("alice", "before"), for: space)
        for peer in [a, b, c, a, b, c] { try fleet.sync(peer) }
        #expect(try c.storage.credentials(for: space)["alice"]?.password == "before")

        try a.storage.sync.untrust(try c.publicKey)
        try a.storage.set(sync("bob", "after the untrust"), for: space)
        try fleet.sync(a)
        let bReports = try fleet.sync(b)
        try fleet.sync(c)
        try fleet.sync(c)

        // B applied A's statement: it no longer trusts C, and says who revoked it.
        #expect(try !b.storage.sync.trustedDevices().map(\.key).contains(try c.publicKey))
        let revoked = try #require(try b.storage.sync.revokedDevices().first)
        #expect(revoked.key == (try c.publicKey))
        #expect(revoked.revokedBy == (try a.publicKey))
        #expect(bReports.flatMap(\.revocations).map(\.key) == [try c.publicKey])
        #expect(try b.storage.credentials(for: space)["bob"]?.password == "after the untrust")
        // C can open neither A's nor B's bundle, and never learnt bob's password.
        for writer in [a, b] {
            #expect {
                try c.storage.sync.importBundle(from: try fleet.bundle(of: writer))
            } throws: { ($0 as? CredentialStorageError)?.code == .bundleNotForThisStore }
        }
        #expect(try c.storage.credentials(for: space)["bob"] == nil)
    }

    @Test func aRevocationTravelsOnWithoutItsAuthor() throws {
        // A revokes C and syncs once, then is gone for good: B relays the statement to D, which
        // trusts A but has never merged A's bundle since the untrust.
        let fleet = try Fleet()
        let d = try SyncPeer()
        try trust([d], [fleet.a, fleet.b, fleet.c])
        try trust([fleet.a, fleet.b, fleet.c], [d])
        try fleet.a.storage.sync.untrust(try fleet.c.publicKey)
        try fleet.sync(fleet.a)
        try fleet.sync(fleet.b)
        try FileManager.default.removeItem(at: try fleet.bundle(of: fleet.a))
        try fleet.sync(d)
        #expect(try d.storage.sync.revokedDevices().map(\.key) == [try fleet.c.publicKey])
        #expect(try d.storage.sync.revokedDevices().map(\.revokedBy) == [try fleet.a.publicKey])
    }

    @Test func aRevokedDeviceCannotReadmitItselfNorRevokeOthers() throws {
        let fleet = try Fleet()
        let (a, b, c) = (fleet.a, fleet.b, fleet.c)
        try a.storage.sync.untrust(try c.publicKey)
        try fleet.sync(a)
        try fleet.sync(b)
        // C, revoked, plants a password for everyone, then revokes B in a bundle for A.
        try c.storage.set(sync("mallory", "from the revoked device"), for: space)
        let planted = try c.export(to: [a, b, c])
        try c.storage.sync.untrust(try b.publicKey)
        let revoking = try c.export(to: [a, c])
        for (peer, bundle) in [(a, planted), (b, planted), (a, revoking)] {
            #expect {
                try peer.storage.sync.importBundle(from: bundle)
            } throws: { ($0 as? CredentialStorageError)?.code == .bundleNotForThisStore && "\($0)".contains("revoked") }
        }
        // Nor does C's statement travel: B refused C's bundle, so it has nothing of it to relay.
        try fleet.sync(b)
        try fleet.sync(a)
        #expect(try a.storage.sync.trustedDevices().map(\.key).contains(try b.publicKey))
        #expect(try a.storage.credentials(for: space)["mallory"] == nil)
    }

    @Test func aLocalTrustBringsTheDeviceBackHereOnly() throws {
        let fleet = try Fleet()
        let (a, b, c) = (fleet.a, fleet.b, fleet.c)
        try a.storage.sync.untrust(try c.publicKey)
        try fleet.sync(a)
        try fleet.sync(b)
        #expect(try !b.storage.sync.trustedDevices().map(\.key).contains(try c.publicKey))

        // B trusts C again: A's older statement, still in A's bundle, does not revoke it anew.
        try b.storage.sync.trust(try c.publicKey)
        try b.storage.set(sync("carol", "for b and c"), for: space)
        try fleet.sync(b)
        try fleet.sync(b)
        try fleet.sync(c)
        #expect(try b.storage.sync.trustedDevices().map(\.key).contains(try c.publicKey))
        #expect(try b.storage.sync.revokedDevices().isEmpty)
        #expect(try c.storage.credentials(for: space)["carol"]?.password == "for b and c")
        // A still refuses C: only A's own trust brings C back there.
        #expect(try a.storage.sync.revokedDevices().map(\.key) == [try c.publicKey])
    }

    /// B trusts C again over A's revocation; D had revoked C too, a day after A and three days
    /// before B's trust, and its statement reaches B only later: B's choice stands over it. A
    /// revocation made after the trust still revokes C there.
    @Test func aTrustAgainStandsOverAnotherRevocationMadeWellBeforeIt() throws {
        let clock = TestClock()
        let (a, b, c, d) = (try SyncPeer(clock: clock), try SyncPeer(clock: clock), try SyncPeer(clock: clock), try SyncPeer(clock: clock))
        try trust([a, b, c, d], [a, b, c, d])
        try a.storage.sync.untrust(try c.publicKey)
        clock.advance(by: TestClock.day)
        try d.storage.sync.untrust(try c.publicKey)
        _ = try b.storage.sync.importBundle(from: try a.export(to: [b]))
        #expect(try b.storage.sync.revokedDevices().map(\.key) == [try c.publicKey])

        clock.advance(by: 3 * TestClock.day)
        try b.storage.sync.trust(try c.publicKey)
        let report = try b.storage.sync.importBundle(from: try d.export(to: [b]))
        #expect(report.revocations.isEmpty)
        #expect(try b.storage.sync.trustedDevices().map(\.key).contains(try c.publicKey))

        // A trusts C again and, a day later, revokes it anew: that one is after B's trust.
        clock.advance(by: TestClock.day)
        try a.storage.sync.trust(try c.publicKey)
        clock.advance(by: TestClock.day)
        try a.storage.sync.untrust(try c.publicKey)
        let later = try b.storage.sync.importBundle(from: try a.export(to: [b]))
        #expect(later.revocations.map(\.key) == [try c.publicKey])
        #expect(try !b.storage.sync.trustedDevices().map(\.key).contains(try c.publicKey))
    }

    /// Within two days of the trust, the clocks (each up to a day off) cannot tell which came
    /// first: the revocation wins, and the user trusts the device once more.
    @Test func aRevocationMadeJustBeforeATrustAgainStillRevokes() throws {
        let clock = TestClock()
        let (a, b, c, d) = (try SyncPeer(clock: clock), try SyncPeer(clock: clock), try SyncPeer(clock: clock), try SyncPeer(clock: clock))
        try trust([a, b, c, d], [a, b, c, d])
        try a.storage.sync.untrust(try c.publicKey)
        _ = try b.storage.sync.importBundle(from: try a.export(to: [b]))
        clock.advance(by: 3 * TestClock.day)
        try d.storage.sync.untrust(try c.publicKey)
        clock.advance(by: 47 * 3_600_000)
        try b.storage.sync.trust(try c.publicKey)
        let report = try b.storage.sync.importBundle(from: try d.export(to: [b]))
        #expect(report.revocations.map(\.key) == [try c.publicKey])
    }

    @Test func aRevocationReachesAStoreWhoseClockIsAheadOfTheRevokers() throws {
        // The revoker 139 minutes slow, a receiver 691 minutes fast, both within the allowed skew:
        // the receiver trusted C "later" by its own clock than the revocation's time by the revoker's.
        let start = nowMillis()
        let slow = TestClock(startingAt: start - 139 * 60_000), fast = TestClock(startingAt: start + 691 * 60_000)
        let revoker = try SyncPeer(clock: slow), receiver = try SyncPeer(clock: fast), c = try SyncPeer()
        try trust([revoker, receiver, c], [revoker, receiver, c])
        try revoker.storage.sync.untrust(try c.publicKey)
        let report = try receiver.storage.sync.importBundle(from: try revoker.export(to: [receiver]))
        #expect(report.revocations.map(\.key) == [try c.publicKey])
        #expect(try !receiver.storage.sync.trustedDevices().map(\.key).contains(try c.publicKey))
    }

    @Test func aRevokedDevicesBundleThatSortsFirstMergesNowhere() throws {
        let fleet = try Fleet()
        let (x, y, z) = (fleet.a, fleet.b, fleet.c)
        try x.storage.set(sync("alice", "genuine"), for: space)
        for peer in [x, y, z, x, y, z] { try fleet.sync(peer) }
        try x.storage.sync.untrust(try z.publicKey)
        try fleet.sync(x)
        // Z plants a password and revokes X, in a bundle named to be read before X's.
        try z.storage.set(sync("alice", "EVIL"), for: space)
        try z.storage.sync.untrust(try x.publicKey)
        try z.storage.sync.export(
            to: fleet.folder.directory.appendingPathComponent("0.csbundle"),
            protection: .recipients([try y.publicKey, try z.publicKey]))
        try fleet.sync(y)
        try fleet.sync(x)
        for peer in [x, y] {
            #expect(try peer.storage.credentials(for: space)["alice"]?.password == "genuine")
            #expect(try peer.storage.sync.revokedDevices().map(\.key) == [try z.publicKey], "Z revoked, X not: Z's later statement is refused")
        }
    }

    @Test func aStoreRestoredToBeforeItsOwnRevocationLearnsItAgain() throws {
        let fleet = try Fleet()
        let (a, b) = (fleet.a, fleet.b)
        for peer in [a, b, fleet.c] { try fleet.sync(peer) }
        let backup = a.file("a.backup")
        try a.storage.maintenance.backup(to: backup, passphrase: "backup passphrase")
        try a.storage.sync.untrust(try b.publicKey)
        try fleet.sync(a)
        try fleet.sync(fleet.c)
        try StoreFile.restore(from: backup, passphrase: "backup passphrase", to: a.folder.databaseURL,
                                      key: .keyFile(a.folder.keyFileURL), rollbackAnchor: .directory(a.folder.anchorDirectory))
        let restored = try a.folder.open()
        #expect(try restored.sync.trustedDevices().map(\.key).contains(try b.publicKey), "the backup predates the revocation")
        _ = try restored.sync.applyRevocations(fromBundlesAt: [try fleet.bundle(of: fleet.c)])
        #expect(try restored.sync.revokedDevices().map(\.key) == [try b.publicKey], "C relays A's own statement back to it")
    }

    @Test func noBundleIsWrittenForARevokedDeviceNorForThisStoreItself() throws {
        let fleet = try Fleet()
        try fleet.a.storage.sync.untrust(try fleet.c.publicKey)
        expectError(.invalidInput) {
            try fleet.a.storage.sync.export(to: fleet.a.file("x.csbundle"), protection: .recipients([try fleet.c.publicKey]))
        }
        expectError(.invalidInput) { try fleet.a.storage.sync.trust(try fleet.a.publicKey) }
    }

    @Test func aStatementWhoseSignatureDoesNotVerifyRefusesTheBundle() throws {
        let fleet = try Fleet()
        let (a, b, c) = (fleet.a, fleet.b, fleet.c)
        // B writes a bundle claiming that A revoked C, with a signature that is not A's.
        let identity = try b.storage.deviceIdentity()
        var forged = RevocationStatement(revoking: try c.publicKey, by: identity, at: SystemClock().now())
        forged.revoker = try a.publicKey
        let contents = BundleContents(
            senderDevice: identity.deviceID, signer: identity.publicKey, created: SystemClock().now(), items: [], defaults: [], revocations: [forged])
        let url = b.file("forged.csbundle")
        try Data(try BundleFormat.write(contents, protection: .recipients([try c.publicKey]), signer: identity)).write(to: url)
        #expect { try c.storage.sync.importBundle(from: url) } throws: { ($0 as? CredentialStorageError)?.code == .invalidBundle }
        #expect(try c.storage.sync.trustedDevices().map(\.key).contains(try a.publicKey))
        #expect(try c.storage.sync.revokedDevices().isEmpty)
    }

    @Test func revocationsSurviveARekeyAndAVerify() throws {
        let fleet = try Fleet()
        try fleet.a.storage.sync.untrust(try fleet.c.publicKey)
        try fleet.a.storage.maintenance.rekey()
        #expect(try fleet.a.storage.sync.revokedDevices().map(\.key) == [try fleet.c.publicKey])
        #expect(try fleet.a.storage.maintenance.verify().problems.isEmpty)
        // A quiet export after the revocation leaves the bundle as it was.
        try fleet.sync(fleet.a)
        let before = try Data(contentsOf: try fleet.bundle(of: fleet.a))
        try fleet.sync(fleet.a)
        #expect(try Data(contentsOf: try fleet.bundle(of: fleet.a)) == before)
    }
}
