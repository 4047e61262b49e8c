import ArgumentParser
import CredentialStore
import Foundation

/// `credstore add URL --user U …`: stores a password, read from stdin or a no-echo prompt.
struct AddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        _superCommandName: CredstoreCommand.name,
        abstract: "Store a credential.",
        discussion: """
            The password is one line of standard input (the newline is not part of it) or, on a \
            terminal, typed twice at a prompt that does not echo. It never comes from the command \
            line. Adding a user that the space already has replaces that user's password and what \
            else the command names, and keeps the rest: its tier unless --persistence is given, \
            its label, comment, expiry and refresh token unless given, and each attribute not \
            given. Moving a synchronizable credential to another tier removes it from every \
            synced machine, so it needs --synchronizable too. `credstore edit` changes the \
            details without the password. The first credential of a space becomes its default. \
            With --refresh-token, an OAuth refresh token is read the same way after the password \
            (the next line, or a second prompt). --expires takes a UTC time \
            (2026-12-31T00:00:00Z) or a duration from now (30d, 12h, 45m, 90s); an expired \
            credential is no space's default.
            """)

    @OptionGroup var space: SpaceOptions

    @Option(help: "The user name.")
    var user: String

    @Option(help: "Where the credential is kept: permanent (this machine) or synchronizable (also exported); a new credential is permanent, a replaced one keeps its tier.")
    var persistence: PersistenceName?

    @Flag(help: "Confirm moving a synchronizable credential to another tier, which removes it on every synced machine.")
    var synchronizable = false

    @Flag(name: .customLong("default"), help: "Make this credential the default of its space.")
    var makeDefault = false

    @Option(help: ArgumentHelp("When the credential expires: 2026-12-31T00:00:00Z, or 30d, 12h, 45m, 90s from now.", valueName: "time"))
    var expires: String?

    @Flag(name: .customLong("refresh-token"), help: "Also read an OAuth refresh token, like the password (never from the command line).")
    var readsRefreshToken = false

    @Option(help: "A label to find the credential by.")
    var label: String?

    @Option(help: "A note kept with the credential.")
    var comment: String?

    @Option(name: .customLong("attr"), help: ArgumentHelp("An attribute (repeatable).", valueName: "name=value"))
    var attributes: [String] = []

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard !user.isEmpty else { throw ValidationError("--user needs a user name") }
        if let expires { _ = try Self.expiry(expires, now: Date()) }
        _ = try SearchFilters.pairs(attributes)
    }

    /// What moving a synchronizable credential to another tier without `--synchronizable` prints.
    static func leavingSync(user: String, space: ProtectionSpace, to persistence: Persistence) -> CommandFailure {
        CommandFailure(.usage, "the credential of \(user) at \(Describe.space(space)) is synchronizable, so making it \(persistence.rawValue) removes it on every synced machine; add --synchronizable to confirm, or leave out --persistence to keep it synchronizable")
    }

    /// `--expires`: an ISO 8601 time in UTC, or a whole number of days, hours, minutes or seconds
    /// from `now`.
    static func expiry(_ text: String, now: Date) throws -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        guard let date = DurationText.seconds(text).map({ now.addingTimeInterval(TimeInterval($0)) }) ?? formatter.date(from: text) else {
            throw ValidationError("--expires takes a time such as 2026-12-31T00:00:00Z or a duration such as 30d, 12h, 45m or 90s")
        }
        // One range for every time credstore keeps: 1970 through 9999.
        guard date.timeIntervalSince1970 >= 0, date.timeIntervalSince1970 <= Double(Describe.latestExpiry) else {
            throw ValidationError("--expires must fall between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z")
        }
        return date
    }

    func run() throws {
        let console = Console.current
        let protectionSpace = try space.protectionSpace()
        // The model's rules for the user name, before a store is created or a password asked for.
        try Credential.validate(user: user, password: nil)
        let storage = try global.location(in: console).openOrCreate(console)
        let password = try console.readNewPassword(prompt: "Password for \(user) at \(Describe.space(protectionSpace)): ")
        let refreshToken = readsRefreshToken
            ? try console.readNewPassword(prompt: "Refresh token for \(user): ", what: "refresh token") : nil
        var credential = Credential(
            user: user, password: password, expires: try expires.map { try Self.expiry($0, now: Date()) }, refreshToken: refreshToken,
            label: label, comment: comment, attributes: try SearchFilters.pairs(attributes))
        if let persistence { credential.persistence = persistence.persistence }
        let options: RemovalOptions = synchronizable ? .removeSynchronizable : []
        do {
            if makeDefault {
                try storage.setDefaultCredential(credential, for: protectionSpace, options: options)
            } else {
                try storage.set(credential, for: protectionSpace, options: options)
            }
        } catch CredentialStorageError.Code.synchronizableRemovalNeedsOption {
            throw Self.leavingSync(user: user, space: protectionSpace, to: credential.persistence)
        }
    }
}
