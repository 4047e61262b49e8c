import Foundation
import Testing

/// Secrets typed at the terminal: driven through a pseudo-terminal, as a person would type them.
@Suite(.serialized)
struct TerminalTests {
    @Test func thePasswordPromptDoesNotEchoAndStoresWhatWasTyped() throws {
        let sandbox = try Sandbox()
        let terminal = try PseudoTerminal()
        try terminal.start(["add", "https://api.example.com", "--user", "alice"], environment: sandbox.environment)

        #expect(terminal.waitFor("Password for alice at https://api.example.com:443: "))
        terminal.type("typed-Secret 1\r")
        #expect(terminal.waitFor("Retype the password: "))
        terminal.type("typed-Secret 1\r")
        #expect(try terminal.waitForExit() == 0)

        #expect(!terminal.transcript.contains("typed-Secret"), "the terminal showed: \(terminal.transcript)")
        #expect(terminal.echoIsOn)
        // Stored exactly as typed, without the Enter.
        #expect(try sandbox.run(["get", "https://api.example.com"]).stdout == "typed-Secret 1\n")
    }

    @Test func twoDifferentAnswersStoreNothing() throws {
        let sandbox = try Sandbox()
        let terminal = try PseudoTerminal()
        try terminal.start(["add", "https://api.example.com", "--user", "alice"], environment: sandbox.environment)
        #expect(terminal.waitFor("Password for alice"))
        terminal.type("one\r")
        #expect(terminal.waitFor("Retype the password: "))
        terminal.type("two\r")
        #expect(try terminal.waitForExit() == 65)
        #expect(terminal.transcript.contains("credstore: the two passwords do not match"))
        #expect(terminal.echoIsOn)
        #expect(try sandbox.run(["get", "https://api.example.com"]).status == 1)
    }

    @Test func interruptingThePromptTurnsEchoBackOn() throws {
        let sandbox = try Sandbox()
        let terminal = try PseudoTerminal()
        try terminal.start(["add", "https://api.example.com", "--user", "alice"], environment: sandbox.environment)
        #expect(terminal.waitFor("Password for alice"))
        #expect(!terminal.echoIsOn)
        terminal.type("half-typ\u{03}")
        #expect(try terminal.waitForExit() == 128 + 2)
        #expect(terminal.echoIsOn)
        #expect(!terminal.transcript.contains("half-typ"))
    }

    @Test func aPassphraseStoreAsksForItsPassphraseWithoutEcho() throws {
        let sandbox = try Sandbox()
        let passphrase = ["CREDSTORE_PASSPHRASE": "typed phrase"]
        #expect(try sandbox.run(["init", "--passphrase"], environment: passphrase).status == 0)
        #expect(try sandbox.run(["add", "https://api.example.com", "--user", "alice"], stdin: "pw\n", environment: passphrase).status == 0)

        let terminal = try PseudoTerminal()
        try terminal.start(["get", "https://api.example.com"], environment: sandbox.environment)
        #expect(terminal.waitFor("Passphrase for \(sandbox.defaultStore.path): "))
        terminal.type("not it\r")
        #expect(terminal.waitFor("try again"))
        terminal.type("typed phrase\r")
        #expect(try terminal.waitForExit() == 0)
        #expect(terminal.transcript.hasSuffix("pw\r\n"))
        #expect(!terminal.transcript.contains("typed phrase") && !terminal.transcript.contains("not it"))
    }
}
