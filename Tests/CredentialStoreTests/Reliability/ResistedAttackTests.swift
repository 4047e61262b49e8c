import Foundation
import GRDB
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// Attacks that an attack review tried and the store already resisted, each kept as a test so that
/// a later change cannot reopen it (docs/security.md, "Attacks tried").
@Suite(.cheapKeyDerivation) struct ResistedAttackTests {
    let store: TemporaryStore
    let api = Fixture.space("api.example.com", realm: "API")
    let other = Fixture.space("other.example.com", realm: "Other")

    init() throws {
        store = try TemporaryStore()
    }

    private func withRawDatabase(_ body: (Database) throws -> Void) throws {
        try store.rawDatabase().writeWithoutTransaction(body)
    }

    // MARK: Rows moved or indexes forged

    /// An attacker re-labels alice's row of `api` as a row of `other` by copying `other`'s blind
    /// index onto it: a lookup of `other` must not answer with `api`'s password.
    @Test func aRowMovedUnderAnotherSpacesIndexIsTamperNotAnAnswer() throws {
        do {
            let storage = try store.open()
            try storage.set(Fixture.credential("alice", "api-secret"), for: api)
            try storage.set(Fixture.credential("bob", "other-secret"), for: other)
            try storage.remove(user: "bob", for: other)
        }
        let otherIndex = try #require(try {
            let storage = try store.open()
            return Data(storage.keys.spaceIndex(other))
        }())
        store.waitUntilClosed()
        try withRawDatabase { db in
            try db.execute(sql: "UPDATE credentials SET space_index = ?", arguments: [otherIndex])
        }
        // The seal tree refuses both spaces' lookups (a row left one leaf and joined another); and
        // the row's own authentication would fail too rather than hand out the moved password.
        expectError(.tamperDetected, secrets: ["api-secret"]) { try store.open().defaultCredential(for: api) }
        let oneLookup = try store.open(integrityCheck: .onOpen)
        expectError(.tamperDetected, secrets: ["api-secret"]) { try oneLookup.defaultCredential(for: other) }
        expectError(.tamperDetected, secrets: ["api-secret"]) { try oneLookup.credentials(for: other) }
        let report = try oneLookup.maintenance.verify()
        #expect(!report.isSound)
        #expect(report.problems.allSatisfy { !$0.contains("api-secret") })
    }

    /// A forged user index (alice's row claiming to be bob's) is caught when the row is opened.
    @Test func aForgedUserIndexIsCaughtWhenTheRowIsOpened() throws {
        var bobIndex = Data()
        do {
            let storage = try store.open()
            try storage.set(Fixture.credential("alice", "alices-secret"), for: api)
            let spaceIndex = storage.keys.spaceIndex(api)
            bobIndex = Data(storage.keys.userIndex(spaceIndex: spaceIndex, user: "bob"))
        }
        store.waitUntilClosed()
        try withRawDatabase { db in
            try db.execute(sql: "UPDATE credentials SET user_index = ?", arguments: [bobIndex])
        }
        let oneLookup = try store.open(integrityCheck: .onOpen)
        #expect(throws: CredentialStorageError.self) { try oneLookup.credentials(for: api)["bob"] }
        #expect(try !oneLookup.maintenance.verify().isSound)
    }

    // MARK: Key slots

    /// Lowering the Argon2id cost stored beside a passphrase slot (to make the next unlock, or an
    /// offline guess, cheaper) only derives another key: the commitment refuses it as the wrong
    /// key, nothing is written, and the store opens again once the cost is put back.
    @Test func aLoweredArgon2CostOpensNothingAndChangesNothing() throws {
        let passphrase = "correct horse battery"
        do {
            let storage = try CredentialStorage(at: store.databaseURL, key: .passphrase(passphrase),
                                                rollbackAnchor: .directory(store.anchorDirectory))
            try storage.set(Fixture.credential("alice", "pw"), for: api)
        }
        var original: (Int64, Int64) = (0, 0)
        store.waitUntilClosed()
        try withRawDatabase { db in
            let row = try #require(try Row.fetchOne(db, sql: "SELECT kdf_opslimit, kdf_memlimit FROM key_slots WHERE kind = 'passphrase'"))
            original = (row[0], row[1])
            try db.execute(sql: "UPDATE key_slots SET kdf_opslimit = 1, kdf_memlimit = 8192 WHERE kind = 'passphrase'")
        }
        let lowered = try Data(contentsOf: store.databaseURL)
        expectError(.wrongKey, secrets: [passphrase]) {
            try CredentialStorage(at: store.databaseURL, key: .passphrase(passphrase),
                                  rollbackAnchor: .directory(store.anchorDirectory))
        }
        #expect(try Data(contentsOf: store.databaseURL) == lowered, "a refused open wrote to the store")
        try withRawDatabase { db in
            try db.execute(sql: "UPDATE key_slots SET kdf_opslimit = ?, kdf_memlimit = ? WHERE kind = 'passphrase'",
                           arguments: [original.0, original.1])
        }
        let reopened = try CredentialStorage(at: store.databaseURL, key: .passphrase(passphrase),
                                             rollbackAnchor: .directory(store.anchorDirectory))
        #expect(try reopened.defaultCredential(for: api)?.password == "pw")
    }

    /// Raising it instead (to make the next unlock take 4 GiB and minutes) is refused before any
    /// derivation: the cost a slot may ask for is capped at what credstore writes.
    @Test(arguments: [(16, 3 << 28), (3, 4 << 30), (4, 1 << 30)])
    func aRaisedArgon2CostIsRefusedBeforeDerivation(opsLimit: Int64, memLimit: Int64) throws {
        let passphrase = "correct horse battery"
        do {
            let storage = try CredentialStorage(at: store.databaseURL, key: .passphrase(passphrase),
                                                rollbackAnchor: .directory(store.anchorDirectory))
            try storage.set(Fixture.credential("alice", "pw"), for: api)
        }
        store.waitUntilClosed()
        try withRawDatabase { db in
            try db.execute(sql: "UPDATE key_slots SET kdf_opslimit = ?, kdf_memlimit = ? WHERE kind = 'passphrase'",
                           arguments: [opsLimit, memLimit])
        }
        expectError(.corrupt, secrets: [passphrase]) {
            try CredentialStorage(at: store.databaseURL, key: .passphrase(passphrase),
                                  rollbackAnchor: .directory(store.anchorDirectory))
        }
    }

    // MARK: Spaces that look alike

    /// A credential stored for https is never offered to the same host over http, nor to another
    /// port of the same host: a network attacker who downgrades or redirects the scheme or port
    /// gets nothing.
    @Test(arguments: [
        "http://api.example.com/", "https://api.example.com:8443/", "http://api.example.com:443/",
        "ftp://api.example.com/", "https://api.example.com.evil.example/", "https://evil.example/api.example.com",
    ])
    func aDowngradedSchemeOrAnotherPortFindsNothing(_ url: String) throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "pw"),
                        for: try ProtectionSpace(url: URL(string: "https://api.example.com/")!))
        #expect(try storage.defaultCredential(answering: .request(URL(string: url)!))?.credential == nil)
        #expect(try storage.defaultCredential(answering: .request(URL(string: "https://api.example.com/v1")!))?.credential.password == "pw")
    }

    /// A homograph of a stored host, in Unicode or in its punycode form, is another host.
    @Test(arguments: [
        "https://\u{0430}pple.com/",      // Cyrillic "а"
        "https://xn--pple-43d.com/",      // the same, as punycode
        "https://xn--apple-.com/", "https://apple.com.xn--ihqw4k/",
    ])
    func aHomographOrPunycodeHostFindsNothing(_ url: String) throws {
        let storage = try store.open()
        try storage.set(Fixture.credential("alice", "pw"),
                        for: try ProtectionSpace(url: URL(string: "https://apple.com/")!))
        let lookalike = URL(string: url)
        if let lookalike {
            // Read as another host and found empty, or refused as no valid name: nothing either way.
            do {
                #expect(try storage.defaultCredential(answering: .request(lookalike))?.credential == nil)
            } catch CredentialStorageError.Code.invalidInput {}
        }
        #expect(try storage.defaultCredential(answering: .request(URL(string: "https://APPLE.com./")!))?.credential.password == "pw")
    }

    // MARK: Files

    /// Under umask 000 a new store's folder and files are still private to the user.
    @Test func filesArePrivateEvenUnderUmask000() throws {
        let previous = umask(0)
        defer { umask(previous) }
        let storage = try store.open()
        try storage.set(Fixture.credential("alice"), for: api)
        func mode(_ path: String) throws -> Int {
            try (FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
        }
        #expect(try mode(store.directory.path) == 0o700)
        for path in [store.databaseURL.path, store.keyFileURL.path, store.databaseURL.path + "-wal", store.databaseURL.path + "-shm"] {
            #expect(try mode(path) == 0o600, "\(path)")
        }
    }
}
