import CredentialStoreCLI
import Foundation
import Synchronization

/// Text a command wrote, kept for assertions.
final class CapturedText: TextOutput {
    private let text = Mutex("")

    func write(_ text: String) {
        self.text.withLock { $0 += text }
    }

    var value: String { text.withLock { $0 } }
}

/// Standard input as a test scripts it: lines piped in, or answers typed at prompts.
final class ScriptedInput: SecretInput {
    let isTerminal: Bool
    private let lines: Mutex<[String]>
    private let prompts = Mutex<[String]>([])

    init(terminal: Bool, lines: [String]) {
        isTerminal = terminal
        self.lines = Mutex(lines)
    }

    func readLine() throws -> String? {
        lines.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }

    func readSecret(prompt: String) throws -> String? {
        prompts.withLock { $0.append(prompt) }
        return try readLine()
    }

    /// The prompts shown, in order.
    var promptsShown: [String] { prompts.withLock { $0 } }
}

/// Runs `credstore arguments` in this process against a console of the test's making.
struct InProcessRun {
    var status: Int32
    var stdout: String
    var stderr: String
    var prompts: [String]
}

func runInProcess(_ arguments: [String], environment: [String: String], terminal: Bool = false, input: [String] = []) async -> InProcessRun {
    let output = CapturedText()
    let errors = CapturedText()
    let secrets = ScriptedInput(terminal: terminal, lines: input)
    let console = Console(environment: environment, output: output, errors: errors, secrets: secrets)
    let status = await Console.$current.withValue(console) {
        await CredstoreCommand.execute(arguments)
    }
    return InProcessRun(status: status, stdout: output.value, stderr: errors.value, prompts: secrets.promptsShown)
}
