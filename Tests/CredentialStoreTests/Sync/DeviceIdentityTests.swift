import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreTestSupport

/// One device identity per live store: a store restored or copied into another home (another
/// state folder: another rollback anchor folder) takes a new identity and keeps its data, trusted
/// devices and sync state; restored in its own home, it keeps its identity.
@Suite(.cheapKeyDerivation) struct DeviceIdentityTests {
    let store: TemporaryStore
    let space = Fixture.space("synced.example.com")
    let passphrase = "backup passphrase"

    init() throws {
        store = try TemporaryStore()
    }

    private func restore(_ backup: URL, into target: TemporaryStore) throws {
        try StoreFile.restore(
            from: backup, passphrase: passphrase, to: target.databaseURL, key: .keyFile(target.keyFileURL),
            rollbackAnchor: .directory(target.anchorDirectory))
    }

    @Test func aBackupRestoredInItsOwnHomeKeepsItsIdentityAndElsewhereTakesANewOne() throws {
        let peer = try SyncPeer()
        let backup = store.file("store.backup")
        let (deviceID, deviceKey): (String, DeviceKey)
        do {
            let storage = try store.open()
            try storage.set(Fixture.credential("carol", "pw-carol", .synchronizable), for: space)
            try storage.sync.trust(try peer.publicKey)
            (deviceID, deviceKey) = (try storage.sync.deviceID, try storage.sync.deviceKey)
            try storage.maintenance.backup(to: backup, passphrase: passphrase)
        }
        store.waitUntilClosed()

        try restore(backup, into: store)
        let home = try store.open()
        #expect(try home.sync.settleIdentity() == nil)
        #expect(try home.sync.deviceID == deviceID && home.sync.deviceKey == deviceKey)

        let elsewhere = try TemporaryStore()
        try restore(backup, into: elsewhere)
        let restored = try elsewhere.open()
        let renewal = try #require(try restored.sync.settleIdentity())
        #expect(renewal.previousID == deviceID && renewal.previousKey == deviceKey)
        #expect(try restored.sync.deviceID == renewal.id && restored.sync.deviceKey == renewal.key)
        #expect(renewal.id != deviceID && renewal.key != deviceKey)
        // The same user's data, a new device: the credential and the trusted peer stay, and the
        // device it came from is trusted as another one.
        #expect(try restored.credentials(for: space)["carol"]?.password == "pw-carol")
        #expect(try Set(restored.sync.trustedDevices().map(\.key)) == [try peer.publicKey, deviceKey])
        // Once: it is this home's identity from now on, across opens.
        #expect(try restored.sync.settleIdentity() == nil)
        #expect(try elsewhere.open().sync.deviceID == renewal.id)
        #expect(try restored.maintenance.verify().isSound)
    }

    @Test func theIdentityOfAStoreMadeBeforePlacesWereRecordedIsClaimedNotReplaced() throws {
        let deviceID: String
        do {
            // Opened without a state folder, the identity records no place, as older versions made it.
            let storage = try CredentialStorage(at: store.databaseURL, key: .keyFile(store.keyFileURL), rollbackAnchor: .none)
            deviceID = try storage.sync.deviceID
        }
        store.waitUntilClosed()
        do {
            let opened = try store.open()
            #expect(try opened.sync.settleIdentity() == nil)
            #expect(try opened.sync.deviceID == deviceID)
        }
        // Claimed for this home: a copy in another home now takes its own.
        let copy = try store.copy()
        #expect(try copy.open().sync.deviceID != deviceID)
        #expect(try store.open().sync.deviceID == deviceID)
    }

    @Test func deviceResetGivesANewIdentityThatTrustsTheOldKey() throws {
        let storage = try store.open()
        let (deviceID, deviceKey) = (try storage.sync.deviceID, try storage.sync.deviceKey)
        let renewal = try storage.sync.resetIdentity()
        #expect(renewal.previousID == deviceID && renewal.id != deviceID)
        #expect(try storage.sync.deviceID == renewal.id)
        #expect(try storage.sync.trustedDevices().map(\.key) == [deviceKey])
        #expect(try storage.maintenance.verify().isSound)
    }
}
