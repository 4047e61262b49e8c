import ArgumentParser
import CredentialStore

/// `credstore device`: this store's identity among the machines it syncs with.
struct DeviceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "Show this store's device key, or trust another device's.",
        subcommands: [Show.self, Trust.self])

    /// `credstore device show`: prints the device id and the public key other stores export to.
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print this store's device id and public key (give the key to your other machines).")

        @OptionGroup var global: GlobalOptions

        func run() throws {
            let console = Console.current
            let storage = try global.location(in: console).openOrCreate(console)
            let (id, key) = (try storage.deviceID, try storage.devicePublicKey)
            console.output.write(global.json
                ? JSONValue.object([("deviceId", .string(id)), ("publicKey", .string(key))]).rendered + "\n"
                : "device id:  \(id)\npublic key: \(key)\n")
        }
    }

    /// `credstore device trust KEY`: accepts signed bundles from that device.
    struct Trust: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Accept signed bundles from the device with this key.")

        @Argument(help: ArgumentHelp("The other device's key, as `credstore device show` prints it there.", valueName: "key"))
        var key: String

        @OptionGroup var global: GlobalOptions

        func run() throws {
            let console = Console.current
            // A mistyped key is refused before the store is opened, so none is created for it.
            try CredentialStorage.validateDeviceKey(key)
            let storage = try global.location(in: console).openOrCreate(console)
            try storage.trustDevice(key)
            if !global.json { console.output.write("Trusted \(key)\n") }
        }
    }
}
