import ArgumentParser
import CredentialStore
import Foundation

/// `credstore status`: whether the store is unlocked in this session, and until when.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        _superCommandName: CredstoreCommand.name,
        abstract: "Say whether a passphrase store is unlocked, and until when.",
        discussion: "Exit 0 when the store opens without a passphrase (unlocked, or a key-file store), 1 when it is locked.")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let console = Console.current
        let location = global.location(in: console)
        guard location.storeExists else { throw CommandFailure(.notFound, "there is no store at \(location.path)") }
        let passphrase = try location.storeExistsAsPassphraseStore()
        let until = passphrase ? try CredentialStorage.unlockedUntil(storeAt: location.databaseURL) : nil
        let seal = passphrase ? nil : StoreFile.keyFileSeal(at: location.keyFileURL)
        if global.json {
            console.output.write(JSONValue.object([
                ("protection", .string(passphrase ? "passphrase" : "keyFile")),
                ("sealedWith", .string(seal?.rawValue)),
                ("unlocked", .bool(!passphrase || until != nil)),
                ("until", .string(until.map(Describe.timestamp))),
            ]).rendered + "\n")
        } else if !passphrase {
            console.output.write("\(location.path): unlocked by its key file\(seal.map { ", sealed to this machine by \($0.rawValue)" } ?? "")\n")
        } else if let until {
            console.output.write("\(location.path): unlocked until \(Describe.timestamp(until))\n")
        } else {
            console.output.write("\(location.path): locked\n")
        }
        if passphrase, until == nil { throw ExitCode(1) }
    }
}
