import CredentialStore
import CredentialStoreTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// docs/contract.md ("Sync between machines"), "import is atomic", as a user meets it: `credstore import` of a large bundle killed
/// (SIGKILL) while its transaction is under way leaves the store exactly as it was before or
/// exactly as the import makes it, and `credstore verify` passes.
struct ImportKillTests {
    static let oldCount = LargeImport.oldCount
    static let newCount = LargeImport.newCount
    static let total = LargeImport.total

    /// The machine the bundle goes to: a template store copied for each round.
    let sandbox: Sandbox
    let template: URL
    let bundle: URL

    init() throws {
        sandbox = try Sandbox()
        template = sandbox.root.appendingPathComponent("template/credentials.db")
        bundle = sandbox.root.appendingPathComponent("large.csbundle")
        // Built with the library: 20,000 `credstore add`s would take minutes.
        // No rollback anchor in this process: it would be written under the real home.
        let sender = try CredentialStorage(
            at: sandbox.root.appendingPathComponent("sender/credentials.db"),
            key: .keyFile(sandbox.root.appendingPathComponent("sender/store.key")), rollbackAnchor: .none)
        let recipient: DeviceKey
        do {
            let storage = try CredentialStorage(at: template, key: .keyFile(Self.keyFile(of: template)), rollbackAnchor: .none)
            try LargeImport.prepare(storage, trusting: sender)
            recipient = try storage.sync.deviceKey
        }
        // The template is copied file by file: its connection must be closed (the WAL gone) first.
        let wal = template.path + "-wal"
        for _ in 0..<200 where FileManager.default.fileExists(atPath: wal) { usleep(10_000) }

        // Every old synchronizable item gets a new password, and 20,000 new items arrive.
        try LargeImport.writeBundle(from: sender, for: recipient, to: bundle)
    }

    static func space(_ index: Int) -> ProtectionSpace {
        LargeImport.space(index)
    }

    /// `store.key` beside the store, where the CLI looks for it.
    static func keyFile(of store: URL) -> URL {
        store.deletingLastPathComponent().appendingPathComponent("store.key")
    }

    /// A fresh copy of the template store (0600 files in a 0700 folder), named `name`.
    ///
    /// Every copy has the template's store id, so each is run with a rollback anchor folder of its
    /// own (`environment(for:)`): one shared folder would take a copy for a rolled-back store.
    func copyOfTemplate(_ name: String) throws -> URL {
        let store = sandbox.root.appendingPathComponent("\(name)/credentials.db")
        try FileManager.default.createDirectory(at: store.deletingLastPathComponent(), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        for (source, target) in [(template, store), (Self.keyFile(of: template), Self.keyFile(of: store))] {
            try FileManager.default.copyItem(at: source, to: target)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: target.path)
        }
        return store
    }

    /// The CLI's environment for one copy: the sandbox's, with the copy's own rollback anchors.
    func environment(for store: URL) -> [String: String] {
        sandbox.environment.merging(["XDG_STATE_HOME": store.deletingLastPathComponent().appendingPathComponent("state").path]) { _, new in new }
    }

    /// The whole state as a user can see it: `credstore list --json` (timestamps left out, since an
    /// import stamps `modified` with its own time) and every password, read with the library.
    struct Listing: Equatable {
        var entries: [String]
        var credentials: [ProtectionSpace: [String: Credential]]
    }

    func listing(of store: URL, sourceLocation: SourceLocation = #_sourceLocation) throws -> Listing {
        let listed = try sandbox.run(["list", "--json", "--store", store.path], environment: environment(for: store))
        #expect(listed.status == 0, "list failed: \(listed.stderr)", sourceLocation: sourceLocation)
        let entries = try jsonArray(listed.stdout).map { entry in
            let rest = entry.filter { $0.key != "created" && $0.key != "modified" }
            return String(decoding: try JSONSerialization.data(withJSONObject: rest, options: .sortedKeys), as: UTF8.self)
        }
        let credentials = try CredentialStorage(at: store, key: .keyFile(Self.keyFile(of: store)), rollbackAnchor: .none).allCredentials()
        return Listing(entries: entries, credentials: credentials)
    }

    enum Outcome: String {
        case old, new
    }

    @Test(.timeLimit(.minutes(2)))
    func aKilledImportLeavesTheOldOrTheNewStateAndVerifyPasses() throws {
        let old = try listing(of: try copyOfTemplate("old"))
        #expect(old.entries.count == Self.oldCount + 10)

        // The state a complete import leaves, to compare each killed round with.
        let complete = try copyOfTemplate("complete")
        let started = Date()
        let imported = try sandbox.run(["import", bundle.path, "--json", "--store", complete.path], environment: environment(for: complete))
        let duration = Date().timeIntervalSince(started)
        try #require(imported.status == 0, "the import failed: \(imported.stderr)")
        let counts = try jsonObject(imported.stdout).filter { ["added", "updated", "removed", "unchanged"].contains($0.key) }
        #expect(counts.mapValues { $0 as? Int } == ["added": Self.newCount, "updated": Self.oldCount, "removed": 0, "unchanged": 0])
        let new = try listing(of: complete)
        #expect(new.entries.count == Self.total + 10)
        #expect(new.credentials[Self.space(0)]?["old-user-0"]?.password == "new-0")

        // On a terminal, `import` draws its progress from inside its transaction (every 1024 items,
        // from 0 to the total, the last just before the commit): each round kills it as soon as
        // the terminal shows its mark. Seeing the mark and the state still old afterwards proves
        // the kill landed mid-transaction.
        var rounds: [(mark: Int, killedAfterMark: Bool, outcome: Outcome?)] = []
        for mark in [0, 5 * 1024, 10 * 1024, 19 * 1024, Self.total] {
            let store = try copyOfTemplate("round-\(mark)")
            let terminal = try PseudoTerminal()
            try terminal.start(["import", bundle.path, "--store", store.path], environment: environment(for: store))
            let shown = terminal.waitUntilShown("%  \(mark)/\(Self.total)", timeout: 30)
            terminal.send(SIGKILL)
            let status = try terminal.waitForExit()
            #expect(shown, "round \(mark): no such progress mark; the terminal showed \(terminal.transcript.suffix(200))")
            // A late mark may be followed by the commit and the exit before the kill lands (a fast
            // binary, a loaded machine): that round then proves nothing, but must end in the new state.
            let killed = status == 128 + SIGKILL
            #expect(killed || status == 0, "round \(mark): the import failed by itself (\(status)): \(terminal.transcript.suffix(200))")

            // verify first: it is the first to open the store after the kill.
            let verified = try sandbox.run(["verify", "--store", store.path], environment: environment(for: store))
            #expect(verified.status == 0, "round \(mark): verify failed: \(verified.stdout) \(verified.stderr)")
            let state = try listing(of: store)
            let outcome: Outcome? = state == old ? .old : state == new ? .new : nil
            #expect(outcome != nil, "round \(mark): \(state.entries.count) entries, neither the old state (\(old.entries.count)) nor the new (\(new.entries.count))")
            #expect(killed || outcome == .new, "round \(mark): the import ended by itself, yet the state is not the new one")
            rounds.append((mark, shown && killed, outcome))
        }

        // Killed after a progress mark, yet the state old: the transaction was under way, uncommitted.
        let midTransaction = rounds.filter { $0.killedAfterMark && $0.outcome == .old }
        #expect(!midTransaction.isEmpty, "no kill landed mid-transaction: \(rounds)")
        print("import of \(Self.total) items took \(String(format: "%.2f", duration)) s; killed at progress marks: "
            + rounds.map { "\($0.mark) → \($0.killedAfterMark ? "" : "not killed after the mark, ")\($0.outcome?.rawValue ?? "torn")" }.joined(separator: ", "))
    }
}
