import ArgumentParser
import CredentialStore
import Foundation

/// `credstore edit URL --user U …`: changes a credential's details or tier without its password.
struct EditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        _superCommandName: CredstoreCommand.name,
        abstract: "Change a credential's details or tier, keeping its password.",
        discussion: """
            Changes what the options name and keeps everything else. An empty --label or \
            --comment clears it; --expires never clears the expiry; --remove-attr removes an \
            attribute. Moving a synchronizable credential to another tier removes it from every \
            synced machine, so it needs --synchronizable too. With --refresh-token a new OAuth \
            refresh token is read from standard input or a no-echo prompt, never from the \
            command line. To change the password, run `credstore add` again.
            """)

    @OptionGroup var space: SpaceOptions

    @Option(help: "The user whose credential to change.")
    var user: String

    @Option(help: "A label to find the credential by (empty: none).")
    var label: String?

    @Option(help: "A note kept with the credential (empty: none).")
    var comment: String?

    @Option(name: .customLong("attr"), help: ArgumentHelp("Set an attribute (repeatable).", valueName: "name=value"))
    var attributes: [String] = []

    @Option(name: .customLong("remove-attr"), help: ArgumentHelp("Remove an attribute (repeatable).", valueName: "name"))
    var removedAttributes: [String] = []

    @Option(help: ArgumentHelp("When the credential expires: 2026-12-31T00:00:00Z, 30d, 12h, 45m, 90s from now, or never.", valueName: "time"))
    var expires: String?

    @Flag(name: .customLong("refresh-token"), help: "Read a new OAuth refresh token, like a password (never from the command line).")
    var readsRefreshToken = false

    @Flag(name: .customLong("no-refresh-token"), help: "Forget the OAuth refresh token.")
    var forgetsRefreshToken = false

    @Option(help: "Where the credential is kept: permanent (this machine) or synchronizable (also exported).")
    var persistence: PersistenceName?

    @Flag(help: "Confirm moving a synchronizable credential to another tier, which removes it on every synced machine.")
    var synchronizable = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard !user.isEmpty else { throw ValidationError("--user needs a user name") }
        if let expires, expires != "never" { _ = try AddCommand.expiry(expires, now: Date()) }
        _ = try SearchFilters.pairs(attributes)
        if readsRefreshToken, forgetsRefreshToken {
            throw ValidationError("--refresh-token and --no-refresh-token exclude each other")
        }
        let namesSomething = label != nil || comment != nil || !attributes.isEmpty || !removedAttributes.isEmpty || expires != nil
            || readsRefreshToken || forgetsRefreshToken || persistence != nil
        guard namesSomething else {
            throw ValidationError("name what to change: --label, --comment, --attr, --remove-attr, --expires, --refresh-token, --no-refresh-token or --persistence")
        }
    }

    func run() throws {
        let console = Console.current
        let protectionSpace = try space.protectionSpace()
        let missing = CommandFailure(.notFound, "no credential for \(user) at \(Describe.space(protectionSpace)); add one with `credstore add \(space.request.arguments) --user \(ShellWords.quoted(user))`")
        let storage = try global.location(in: console).openExisting(console, orFail: missing)
        // Read before the write transaction: the change runs under the store's write lock.
        let refreshToken = readsRefreshToken
            ? try console.readNewPassword(prompt: "Refresh token for \(user): ", what: "refresh token") : nil
        let expiry: Date?? = try expires.map { $0 == "never" ? nil : try AddCommand.expiry($0, now: Date()) }
        let setAttributes = try SearchFilters.pairs(attributes)
        do {
            try storage.update(user: user, for: protectionSpace, options: synchronizable ? .removeSynchronizable : []) { credential in
                if let label { credential.label = label.isEmpty ? nil : label }
                if let comment { credential.comment = comment.isEmpty ? nil : comment }
                for name in removedAttributes { credential.attributes[name] = nil }
                credential.attributes.merge(setAttributes) { _, new in new }
                if let expiry { credential.expires = expiry }
                if let refreshToken { credential.refreshToken = refreshToken }
                if forgetsRefreshToken { credential.refreshToken = nil }
                if let persistence { credential.persistence = persistence.persistence }
            }
        } catch CredentialStorageError.Code.notFound {
            throw missing
        } catch CredentialStorageError.Code.synchronizableRemovalNeedsOption {
            throw AddCommand.leavingSync(user: user, space: protectionSpace, to: persistence?.persistence ?? .permanent)
        }
    }
}
