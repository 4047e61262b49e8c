package import ArgumentParser
import CredentialStore
import CredentialStoreFormats
import Dispatch
import Foundation

/// The `credstore` command: administers an encrypted credential store from the shell.
///
/// The executable calls ``execute(_:)``; tests call it too, with their own ``Console`` bound.
package struct CredstoreCommand: AsyncParsableCommand {
    /// The command's name, which every subcommand also gives as its `_superCommandName`: a
    /// subcommand parsed as the root (``parsedThroughItsSubcommand(_:)``) then skips ArgumentParser's
    /// check for the completion-script flags, about a third of its start-up, which only the root
    /// answers. The help screens never read it: their command stack starts at this command.
    static let name = "credstore"

    /// The command's name, help text, version and subcommands.
    package static let configuration = CommandConfiguration(
        commandName: name,
        abstract: "Store and look up passwords in an encrypted credential store.",
        discussion: """
            Every command takes --store PATH (env CREDSTORE_STORE), --key-file PATH \
            (env CREDSTORE_KEY_FILE) and --json after its name. The default store is \
            $XDG_DATA_HOME/credstore/credentials.db (~/.local/share/credstore/credentials.db), \
            unlocked by store.key beside it; both are created on first use. A passphrase store \
            takes its passphrase from CREDSTORE_PASSPHRASE or a prompt. Passwords are read from \
            standard input or a no-echo prompt, never from the command line.

            Exit status: 0 ok; 1 not found or nothing matched; 64 usage; 65 invalid input \
            (a malformed URL, an ambiguous match); 74 I/O error or damaged store; 77 wrong key, \
            tampering, or a store file open to others. See docs/cli.md (with the .deb, \
            /usr/share/doc/credstore/cli.md).
            """,
        version: "0.1.0",
        subcommands: [
            InitCommand.self,
            AddCommand.self,
            EditCommand.self,
            GetCommand.self,
            ListCommand.self,
            SearchCommand.self,
            RemoveCommand.self,
            HistoryCommand.self,
            DefaultCommand.self,
            PasswdCommand.self,
            RekeyCommand.self,
            VerifyCommand.self,
            WatchCommand.self,
            ExportCommand.self,
            ImportCommand.self,
            BackupCommand.self,
            RestoreCommand.self,
            DeviceCommand.self,
            SyncCommand.self,
            GitCredentialCommand.self,
            NetrcCommand.self,
            UnlockCommand.self,
            LockCommand.self,
            StatusCommand.self,
            IdentityCommand.self,
            PinCommand.self,
            CurlArgsCommand.self,
        ])

    /// Creates the root command; ArgumentParser fills in what it parses.
    package init() {}

    /// Runs `credstore` with `arguments` (without the program name) against ``Console/current``
    /// and returns the exit status.
    ///
    /// Every failure ends as one line on the console's stderr, `credstore: <what happened; what
    /// to do>`, and a sysexits status; help and version go to stdout with status 0.
    package static func execute(_ arguments: [String]) async -> Int32 {
        let console = Console.current
        do {
            var command: any ParsableCommand
            if let parsed = parsedThroughItsSubcommand(arguments) {
                command = parsed
            } else {
                command = try await asyncParseAsRoot(arguments)
            }
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return ExitCode.success.rawValue
        } catch {
            return report(error, arguments: arguments, to: console)
        }
    }

    /// Runs this process's command line and exits with its status: all that `credstore`'s and
    /// `credstore-tls`'s `main.swift` do (the latter installs its ``TLSToolkit`` first).
    package static func runAsProcess() -> Never {
        // Before anything can hold a secret: no core dump, no ptrace attach.
        ProcessHardening.apply()
        if let reason = ProcessText.undecodableInput() {
            Foundation.exit(report(CommandFailure(.usage, reason), arguments: [], to: Console.current))
        }
        let arguments = arguments(of: CommandLine.arguments)
        // Every command but `watch` runs right here, without starting the concurrency runtime.
        if let status = executeSynchronously(arguments) { Foundation.exit(status) }
        Task { Foundation.exit(await execute(arguments)) }
        dispatchMain()
    }

    /// The name git runs a helper by when `credential.helper` is `credstore`: a link by this name
    /// to the executable (which the install and the .deb make) is `credstore git-credential`.
    package static let gitHelperName = "git-credential-credstore"

    /// The arguments of the command line `commandLine` (argv, program name first), as the root
    /// command parses them: the program's own when it runs as itself, `git-credential` and git's
    /// operation when it runs as ``gitHelperName``.
    package static func arguments(of commandLine: [String]) -> [String] {
        let rest = Array(commandLine.dropFirst())
        guard let program = commandLine.first, program.pathElements.last == gitHelperName else { return rest }
        return ["git-credential"] + rest
    }

    /// Runs `credstore` with `arguments` on the calling thread, when the command needs no
    /// concurrency (every command but `watch`); returns nil for one that does, which
    /// ``execute(_:)`` then runs.
    ///
    /// Process start-up decides `credstore get`'s speed: entering the concurrency runtime costs
    /// threads and a hand-off that a lookup has no use for. For the same reason a `get` and a
    /// `git-credential get` end the process themselves once they have printed (see
    /// ``Lookup/Completion/exitProcess``): call this only as the process's last act.
    package static func executeSynchronously(_ arguments: [String]) -> Int32? {
        let console = Console.current
        do {
            var command = try parsedThroughItsSubcommand(arguments) ?? parseAsRoot(arguments)
            if command is any AsyncParsableCommand { return nil }
            switch command {
            case let get as GetCommand: try get.lookup.run(console, then: .exitProcess)
            case let git as GitCredentialCommand: try git.run(then: .exitProcess)
            default: try command.run()
            }
            return ExitCode.success.rawValue
        } catch {
            return report(error, arguments: arguments, to: console)
        }
    }

    /// The command `arguments` name, parsed by its own subcommand type alone; nil when the first
    /// argument names no subcommand, asks for help, or does not parse (the root parser then
    /// handles it, so every message, usage line and help text is the root's).
    ///
    /// ArgumentParser's first parse from the root reflects over every command's properties, and
    /// each new property type costs a scan of the binary's protocol conformances: most of a `get`
    /// process that should take a few milliseconds (docs/performance.md, "Start-up"). Parsing from
    /// the named subcommand reflects over that command's properties only; the parser and its rules
    /// are the same. Each top-level subcommand names `credstore` as its `_superCommandName`, so
    /// that parsed as the root it also skips the check for the completion-script flags, which only
    /// the root answers (about 1.5 million instructions). The root takes no options of its own and
    /// has no default subcommand, so a subcommand's successful parse is what the root's would give;
    /// `SubcommandParseTests` checks it for every command.
    package static func parsedThroughItsSubcommand(_ arguments: [String]) -> (any ParsableCommand)? {
        guard !arguments.contains(where: { $0 == "-h" || $0 == "--help" || $0 == "--version" || $0.hasPrefix("--generate-completion") || $0.hasPrefix("--experimental") })
        else { return nil }
        // Down the command tree by name (`netrc export`, `device show`), to a command without
        // subcommands; `_commandName` is the name the root parser matches, derived from the type
        // when the configuration names none (`device`'s subcommands).
        var command: any ParsableCommand.Type = Self.self
        var rest = arguments[...]
        while !command.configuration.subcommands.isEmpty {
            guard let name = rest.first,
                  let next = command.configuration.subcommands.first(where: { $0._commandName == name })
            else { return nil }
            command = next
            rest = rest.dropFirst()
        }
        guard command != Self.self else { return nil }
        return try? command.parseAsRoot(Array(rest))
    }

    /// Writes the one-line message for `error` and returns its exit status.
    package static func report(_ error: any Error, arguments: [String], to console: Console) -> Int32 {
        let (status, message): (ExitCode, String)
        switch error {
        case let failure as CommandFailure:
            (status, message) = (failure.exitCode, failure.message)
        case let failure as FormatError:
            (status, message) = (.dataError, failure.message)
        case let failure as ReadError:
            (status, message) = (.ioError, failure.message)
        case let failure as CredentialStorageError:
            let names = configuration.subcommands.compactMap { $0.configuration.commandName }
            (status, message) = (failure.code.exitCode, failure.messageWithAdvice(command: arguments.first(where: names.contains)))
        case let exit as ExitCode:
            return exit.rawValue
        default:
            let parserStatus = exitCode(for: error)
            if parserStatus == .success {
                // --help, --version, --generate-completion-script.
                console.output.write(fullMessage(for: error) + "\n")
                return ExitCode.success.rawValue
            }
            if parserStatus == .validationFailure {
                // Name the subcommand's help, so the hint leads straight to its options.
                let names = configuration.subcommands.compactMap { $0.configuration.commandName }
                let help = arguments.first(where: names.contains).map { "credstore help \($0)" } ?? "credstore help"
                (status, message) = (.usage, Self.message(for: error) + "; see `\(help)`")
            } else {
                // Not ours and not the parser's: a bug or an unmapped library error. Name its type
                // and description (which carry no secret), and do not pretend it is a usage error.
                (status, message) = (.ioError, "unexpected error: \(String(describing: error)); run `credstore verify`, and report it if it persists")
            }
        }
        // Messages quote user text (a host, a realm, a file name): none may drive the terminal.
        console.errors.write("credstore: \(Describe.cell(oneLine(message)))\n")
        return status.rawValue
    }

    /// Joins a multi-line message into one line, as the error contract wants.
    private static func oneLine(_ message: String) -> String {
        message.split(whereSeparator: \.isNewline)
            .map { $0.drop(while: \.isWhitespace) }
            .filter { !$0.isEmpty }
            .joined(separator: "; ")
    }
}
