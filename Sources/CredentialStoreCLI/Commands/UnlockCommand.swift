import ArgumentParser
import CredentialStore
import Foundation

/// `credstore unlock`: the passphrase once, then no prompt and no key derivation until the
/// timeout, for every process of the login session (git, scripts, the URLSession bridge).
struct UnlockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        _superCommandName: CredstoreCommand.name,
        abstract: "Unlock a passphrase store for this login session.",
        discussion: """
            Asks for the passphrase once (or reads CREDSTORE_PASSPHRASE) and keeps what it unlocks \
            in the Linux kernel keyring, readable only by the session's processes, until --timeout \
            (default 15m; use does not extend it). Nothing of it is written to disk, and no daemon \
            runs. `credstore lock` forgets it at once; `credstore status` says until when it holds.
            """)

    @Option(help: ArgumentHelp("How long the store stays unlocked: 90s, 15m, 8h, 1d.", valueName: "duration"))
    var timeout: String = "15m"

    @Option(help: "Where to keep it: session (this login session) or user (every session of the user).")
    var keyring: KeyringName = .session

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        _ = try Self.seconds(timeout)
    }

    /// A duration of whole days, hours, minutes or seconds, at least one second and at most 365 days.
    static func seconds(_ text: String) throws -> UInt32 {
        guard let total = DurationText.seconds(text), total > 0 else {
            throw ValidationError("--timeout takes a duration such as 90s, 15m, 8h or 1d")
        }
        guard total <= Int(CredentialStorage.maximumUnlockSeconds) else { throw ValidationError("--timeout is at most 365 days (365d, 8760h)") }
        return UInt32(total)
    }

    func run() throws {
        let console = Console.current
        let location = global.location(in: console)
        guard try location.storeExistsAsPassphraseStore() else {
            throw CommandFailure(.usage, "the store \(location.path) is unlocked by its key file; only a passphrase store needs `credstore unlock`")
        }
        // Said before the passphrase is asked for: a key kept out of this session's reach would
        // serve none of its commands, and `lock` could not remove it.
        if keyring.keyring.isOutOfReach {
            throw CommandFailure(.unavailable, "this session's processes cannot reach the \(keyring.rawValue) keyring (no session keyring links it, as under `keyctl session` or in some services); run `credstore unlock --keyring session`")
        }
        // The passphrase is checked even when the store is unlocked already (the open never uses
        // the kept key for it); the kept key is replaced only once the new one is in place, so an
        // unlock that fails leaves the earlier one as it was.
        let storage = try location.openWithPassphraseOnly(console, logger: StoreAccess.logger(console), for: "unlock")
        let until = try storage.keepUnlocked(forSeconds: Self.seconds(timeout), in: keyring.keyring)
        if global.json {
            console.output.write(JSONValue.object([("unlocked", .bool(true)), ("until", .string(Describe.timestamp(until)))]).rendered + "\n")
        } else {
            console.errors.write("credstore: \(location.path) is unlocked until \(Describe.timestamp(until)) (\(keyring.rawValue) keyring)\n")
        }
    }
}
