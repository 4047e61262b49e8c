import ArgumentParser
import CredentialStore
import Foundation
import CredentialStoreFormats

/// `credstore git-credential get|store|erase`: a git credential helper.
///
/// git runs the helper string with the action appended (`credstore git-credential get`), writes
/// `key=value` lines on its standard input and, for `get`, reads `key=value` lines back. So the
/// action is the last argument, options go before it, and nothing but protocol lines may ever reach
/// standard output.
struct GitCredentialCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "git-credential",
        _superCommandName: CredstoreCommand.name,
        abstract: "A git credential helper: git runs it with get, store or erase.",
        discussion: """
            Set it up with `git config --global credential.helper "/usr/local/bin/credstore \
            git-credential"`. git writes protocol, host, path, username, password, \
            password_expiry_utc, oauth_refresh_token and wwwauth[] lines on standard input. With \
            credential.useHttpPath, the path becomes the realm "git:PATH", so each repository \
            has its own credential; otherwise a Basic or Digest realm in wwwauth[] picks the \
            realm. An expired password is not returned. Exit 0 when nothing matched: git treats \
            an empty answer as "ask someone else".
            """)

    @Argument(help: ArgumentHelp("What git asks: get, store or erase (others are ignored, as git's protocol wants).", valueName: "action"))
    var action: String

    @OptionGroup var global: GlobalOptions

    func run() throws {
        try run(then: .returnToCaller)
    }

    /// Answers git; with `.exitProcess`, a `get` ends the process once it has answered, as
    /// `credstore get` does (see ``Lookup/Completion``): git runs it on every fetch and push.
    func run(then completion: Lookup.Completion) throws {
        let console = Console.current
        // git may add actions in future versions; a helper ignores those it does not know.
        guard ["get", "store", "erase"].contains(action) else { return }
        let request = try GitCredentialRequest.read(from: console.secrets)
        guard let space = request.space else { return }
        let location = global.location(in: console)
        switch action {
        case "get":
            // As `credstore get`: the lookup checks the rows it reads against the seal tree.
            guard let storage = try location.openIfPresent(console) else { return }
            if case let (found, credential)? = try request.resolve(in: storage, space: space, console: console) {
                let answer = try GitCredentialRequest.answer(credential, now: Date())
                // Expired with no refresh token: git gets nothing and asks elsewhere (exit 0, as
                // its protocol wants); its user reads why on stderr, which git passes through.
                if answer.isEmpty {
                    console.errors.write("credstore: \(ExpiredAnswer.message(credential, in: found, url: nil))\n")
                }
                console.output.write(answer)
            }
            if completion == .exitProcess {
                withExtendedLifetime(storage) { Foundation.exit(ExitCode.success.rawValue) }
            }
        case "store":
            try request.store(in: location.openOrCreate(console), space: space)
        default:
            guard let storage = try location.openIfPresent(console) else { return }
            try request.erase(in: storage, space: space, console: console)
        }
    }
}
