import ArgumentParser
import CredentialStore

/// `credstore add URL --user U …`: stores a password, read from stdin or a no-echo prompt.
struct AddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        _superCommandName: CredstoreCommand.name,
        abstract: "Store a credential.",
        discussion: """
            The password is one line of standard input (the newline is not part of it) or, on a \
            terminal, typed twice at a prompt that does not echo. It never comes from the command \
            line. Adding a user that the space already has replaces that user's password and tier. \
            The first credential of a space becomes its default.
            """)

    @OptionGroup var space: SpaceOptions

    @Option(help: "The user name.")
    var user: String

    @Option(help: "Where the credential is kept: permanent (this machine) or synchronizable (also exported).")
    var persistence: PersistenceName = .permanent

    @Flag(name: .customLong("default"), help: "Make this credential the default of its space.")
    var makeDefault = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard !user.isEmpty else { throw ValidationError("--user needs a user name") }
    }

    func run() throws {
        let console = Console.current
        let protectionSpace = try space.protectionSpace()
        // The model's rules for the user name, before a store is created or a password asked for.
        try Credential.validate(user: user, password: nil)
        let storage = try global.location(in: console).openOrCreate(console)
        let password = try console.readNewPassword(prompt: "Password for \(user) at \(Describe.space(protectionSpace)): ")
        let credential = Credential(user: user, password: password, persistence: persistence.persistence)
        if makeDefault {
            try storage.setDefaultCredential(credential, for: protectionSpace)
        } else {
            try storage.set(credential, for: protectionSpace)
        }
    }
}
