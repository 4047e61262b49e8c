import Foundation
import Testing
import CredentialStore
import CredentialStoreCore
import CredentialStoreTestSupport

/// `setAll`, the one-transaction write behind `credstore import --from`.
@Suite struct BatchWriteTests {
    let store: TemporaryStore

    init() throws {
        store = try TemporaryStore()
    }

    @Test func eachCredentialIsComparedWithTheStoredOneAndADifferentPasswordIsKeptUnlessReplacing() throws {
        let storage = try store.open()
        let space = Fixture.space("a.example.com")
        try storage.set(Fixture.credential("same", "pw"), for: space)
        try storage.set(Fixture.credential("differs", "old", .synchronizable), for: space)
        // As an importer makes them: no tier named.
        let items = [
            (space: space, credential: Credential(user: "new", password: "n")),
            (space: space, credential: Credential(user: "same", password: "pw")),
            (space: space, credential: Credential(user: "differs", password: "new")),
        ]
        #expect(try storage.setAll(items, replacingDifferent: false, dryRun: false) == [.added, .unchanged, .keptDifferent])
        #expect(try storage.credentials(for: space)["differs"]?.password == "old")
        #expect(try storage.credentials(for: space)["new"]?.password == "n")

        #expect(try storage.setAll(items, replacingDifferent: true, dryRun: false) == [.unchanged, .unchanged, .updated])
        // A credential shared with other machines stays shared when an import replaces its password.
        #expect(try storage.credentials(for: space)["differs"] == Fixture.credential("differs", "new", .synchronizable))
    }

    @Test func aDryRunSaysWhatItWouldDoAndWritesNothing() throws {
        let storage = try store.open()
        let space = Fixture.space("b.example.com")
        let items = [(space: space, credential: Fixture.credential("u", "p")), (space: Fixture.space("c.example.com"), credential: Fixture.credential("v", "q"))]
        #expect(try storage.setAll(items, replacingDifferent: false, dryRun: true) == [.added, .added])
        #expect(try storage.allCredentials().isEmpty)
    }

    @Test func anInvalidCredentialAnywhereInTheBatchWritesNone() throws {
        let storage = try store.open()
        let items = [
            (space: Fixture.space("d.example.com"), credential: Fixture.credential("u", "p")),
            (space: Fixture.space("e.example.com"), credential: Fixture.credential("v", "line\nbreak")),
        ]
        #expect(throws: CredentialStorageError.self) { try storage.setAll(items, replacingDifferent: false, dryRun: false) }
        #expect(try storage.allCredentials().isEmpty)
    }
}
