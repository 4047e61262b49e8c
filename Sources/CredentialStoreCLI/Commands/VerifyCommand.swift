import ArgumentParser
import CredentialStore

/// `credstore verify`: decrypts every row and runs SQLite's integrity check.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        _superCommandName: CredstoreCommand.name,
        abstract: "Check that every credential decrypts and the database is sound.",
        discussion: """
            Opens every credential and default choice against its blind indexes, checks the table \
            seal (no row deleted, restored from an older copy or copied in from elsewhere) and runs \
            SQLite's integrity check. Prints the report; exits 77 if a row fails authentication (altered \
            outside credstore), 74 if only the database structure is damaged, 0 if all is sound.
            """)

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let console = Console.current
        let location = global.location(in: console)
        // The table seal and the rollback anchor are checked by verify() itself, so that their
        // failure is one problem of the report rather than an error that hides the others.
        let storage = try location.openExisting(
            console, integrityCheck: .deferredToVerify, orFail: CommandFailure(.notFound, "there is no store at \(location.path); nothing to verify"))
        let report = try storage.maintenance.verify()

        if global.json {
            console.output.write(JSONValue.object([
                ("store", .string(location.path)),
                ("sound", .bool(report.isSound)),
                ("credentialsChecked", .number(report.credentialsChecked)),
                ("defaultsChecked", .number(report.defaultsChecked)),
                ("problems", .array(report.problems.map { .string($0) })),
            ]).rendered + "\n")
        } else {
            var text = "\(location.path): \(Describe.count(report.credentialsChecked, "credential")) and \(Describe.count(report.defaultsChecked, "default")) decrypted and checked\n"
            for problem in report.problems { text += "problem: \(problem)\n" }
            if report.isSound { text += "No problems found\n" }
            console.output.write(text)
        }

        guard report.isSound else {
            let tampered = report.authenticationFailures > 0
            let count = Describe.count(report.problems.count, "problem")
            let restore = "restore the store from a backup: `credstore restore FILE` puts back a backup that `credstore backup` wrote"
            throw CommandFailure(tampered ? .noPermission : .ioError, tampered
                ? "\(count) in \(location.path): rows fail authentication (altered outside credstore); \(restore)"
                : "\(count) in \(location.path): the database structure is damaged; \(restore)")
        }
    }
}
