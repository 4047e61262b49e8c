import CredentialStoreCLI
import Foundation
import Testing

/// The root command, run in-process: the same code the executable runs, with a scripted console.
struct CredstoreCommandTests {
    /// An environment with a store of the test's own.
    private func environment() throws -> (environment: [String: String], root: URL) {
        let root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("credstore-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        return (["HOME": root.path, "XDG_DATA_HOME": root.appendingPathComponent("data").path], root)
    }

    @Test func commandsRunInProcessAgainstTheBoundConsole() async throws {
        let (environment, root) = try environment()
        defer { try? FileManager.default.removeItem(at: root) }

        let added = await runInProcess(["add", "https://api.example.com", "--user", "alice"], environment: environment, input: ["piped"])
        #expect(added.status == 0)
        #expect(added.prompts.isEmpty)
        let got = await runInProcess(["get", "https://api.example.com", "--json"], environment: environment)
        #expect(got.status == 0)
        #expect(try jsonObject(got.stdout)["password"] as? String == "piped")
    }

    @Test func onATerminalThePasswordIsAskedTwice() async throws {
        let (environment, root) = try environment()
        defer { try? FileManager.default.removeItem(at: root) }

        let added = await runInProcess(["add", "https://api.example.com", "--user", "alice", "--realm", "R"], environment: environment,
                                       terminal: true, input: ["typed", "typed"])
        #expect(added.status == 0)
        #expect(added.prompts == ["Password for alice at https://api.example.com:443 realm \"R\": ", "Retype the password: "])
        #expect(await runInProcess(["get", "https://api.example.com"], environment: environment).stdout == "typed\n")

        let ended = await runInProcess(["add", "https://b.example.com", "--user", "bob"], environment: environment, terminal: true, input: [])
        #expect(ended.status == 65)
        #expect(ended.stderr == "credstore: no password was typed; nothing was changed\n")
    }

    @Test func aWrongPassphraseAtThePromptIsAskedAgainThreeTimesAtMost() async throws {
        let (environment, root) = try environment()
        defer { try? FileManager.default.removeItem(at: root) }

        let created = await runInProcess(["init", "--passphrase"], environment: environment, terminal: true, input: ["phrase", "phrase"])
        #expect(created.status == 0)
        #expect(created.prompts.count == 2)

        let refused = await runInProcess(["list"], environment: environment, terminal: true, input: ["a", "b", "c", "phrase"])
        #expect(refused.status == 77)
        #expect(refused.prompts.count == 3)
        #expect(refused.stderr.split(separator: "\n").count == 3)
        #expect(!refused.stderr.contains("phrase\n"))
    }
}
