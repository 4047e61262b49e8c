import ArgumentParser
import CredentialStore
import Foundation

/// `credstore history URL --user U`: the versions of a synchronizable credential that lost a
/// concurrent edit on another machine, and restoring one.
struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        _superCommandName: CredstoreCommand.name,
        abstract: "List or restore the versions of a credential that lost a concurrent edit.",
        discussion: """
            When the user's synchronizable credential in the exact space (URL, --realm, \
            --method, --proxy) was changed here and, before this machine saw it, on another \
            machine whose change won, `sync` and `import` keep the version that lost. This lists \
            them, newest first, numbered from 1: when each was written and by which device, and \
            when and by which device's change it was replaced; never a password. --show N prints \
            version N's password (with --json, its whole credential). --restore N makes version N \
            the credential again, as a new change that the next sync carries to every machine. \
            Kept versions go when the credential is removed, and after as long as deletions are \
            remembered (docs/sync-format.md). Exit 1 when there is no version N.
            """)

    @OptionGroup var space: SpaceOptions

    @Option(help: "The user whose credential's kept versions to list.")
    var user: String

    @Option(help: ArgumentHelp("Print version N in full, as `get` prints a credential (1 is the newest).", valueName: "n"))
    var show: Int?

    @Option(help: ArgumentHelp("Make version N the credential again, on every machine after the next sync.", valueName: "n"))
    var restore: Int?

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if show != nil, restore != nil { throw ValidationError("give --show or --restore, not both") }
        if let number = show ?? restore, number < 1 { throw ValidationError("versions are numbered from 1, the newest") }
    }

    func run() throws {
        let console = Console.current
        let protectionSpace = try space.protectionSpace()
        let none = CommandFailure(.notFound, "no kept version of \(user)'s credential at \(Describe.space(protectionSpace)) (see `credstore list`)")
        let storage = try global.location(in: console).openExisting(console, orFail: none)
        let versions = try storage.sync.keptVersions(of: user, in: protectionSpace)
        func chosen(_ number: Int) throws -> KeptVersion {
            guard number <= versions.count else {
                throw CommandFailure(.notFound, "\(user)'s credential at \(Describe.space(protectionSpace)) has \(Describe.count(versions.count, "kept version")), not a version \(number); list them with `\(Self.invocation(user: user, space: protectionSpace))`")
            }
            return versions[number - 1]
        }
        if let number = restore {
            try storage.sync.restore(try chosen(number))
            if global.json {
                console.output.write(JSONValue.object([("restored", .number(number))]).rendered + "\n")
            } else {
                console.output.write("Restored version \(number) of \(Describe.cell(user))'s credential at \(Describe.space(protectionSpace)); the next sync carries it to the other machines\n")
            }
            return
        }
        if let number = show {
            let version = try chosen(number)
            console.output.write(global.json ? Self.json(version, number: number, withSecrets: true).rendered + "\n" : Describe.cell(version.credential.password) + "\n")
            return
        }
        let thisDevice = try storage.sync.deviceID
        if global.json {
            console.output.write(JSONValue.array(versions.enumerated().map { Self.json($1, number: $0 + 1, withSecrets: false) }).rendered + "\n")
        } else if versions.isEmpty {
            console.output.write("No kept versions of \(Describe.cell(user))'s credential at \(Describe.space(protectionSpace))\n")
        } else {
            func device(_ id: String) -> String { id == thisDevice ? "this device" : "device \(id)" }
            var text = "Kept versions of \(Describe.cell(user))'s credential at \(Describe.space(protectionSpace)), newest first:\n"
            for (offset, version) in versions.enumerated() {
                text += "\(offset + 1)  written \(Describe.timestamp(version.written)) by \(device(version.writtenBy)); replaced \(Describe.timestamp(version.replaced)) by a change of \(device(version.replacedBy))\n"
            }
            console.output.write(text)
        }
    }

    static func json(_ version: KeptVersion, number: Int, withSecrets: Bool) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("version", .number(number)),
            ("written", .string(Describe.timestamp(version.written))), ("writtenBy", .string(version.writtenBy)),
            ("replaced", .string(Describe.timestamp(version.replaced))), ("replacedBy", .string(version.replacedBy)),
        ]
        if withSecrets {
            fields += [("user", .string(version.credential.user)), ("password", .string(version.credential.password))]
            fields += Describe.detailsJSON(version.credential, withSecrets: true)
        }
        return .object(fields)
    }

    /// `credstore history URL [--realm R] [--method M] [--proxy T] --user U`, as a shell reads it.
    static func invocation(user: String, space: ProtectionSpace) -> String {
        var words = ["credstore", "history", ExpiredAnswer.url(of: space)]
        if let realm = space.realm { words += ["--realm", realm] }
        if space.authenticationMethod != .default { words += ["--method", Describe.method(space.authenticationMethod)] }
        if let proxy = space.proxyType { words += ["--proxy", proxy.rawValue] }
        words += ["--user", user]
        return Describe.cell(ShellWords.joined(words))
    }

    /// The note `sync` and `import` write on stderr for each credential whose change here lost.
    static func conflictNote(_ conflict: SyncConflict) -> String {
        let what = "credstore: conflict: \(Describe.cell(conflict.user))'s credential at \(Describe.space(conflict.space)) was changed here and on another machine at the same time, and the other change won"
        guard conflict.kept else {
            return what + " (one of the two was a removal, so nothing is kept; if the removal was this machine's, the credential is back: remove it again if it should go)\n"
        }
        return what + "; this machine's version is kept: see `\(invocation(user: conflict.user, space: conflict.space))`\n"
    }

    /// The `conflicts` array of the JSON reports of `sync` and `import`.
    static func conflictsJSON(_ conflicts: [SyncConflict]) -> JSONValue {
        .array(conflicts.map { conflict in
            .object([("space", Describe.spaceJSON(conflict.space)), ("user", .string(conflict.user)), ("kept", .bool(conflict.kept))])
        })
    }
}
