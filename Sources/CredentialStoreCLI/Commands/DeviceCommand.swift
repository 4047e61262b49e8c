import ArgumentParser
import CredentialStore
import Foundation

/// `credstore device`: this store's identity among the machines it syncs with.
struct DeviceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        _superCommandName: CredstoreCommand.name,
        abstract: "Show this store's device key, or list, trust or untrust other devices.",
        subcommands: [Show.self, List.self, Trust.self, Untrust.self, Reset.self])

    /// What a store with a new identity tells its user: the new key, and where to trust it.
    static func announce(_ renewal: DeviceRenewal) -> String {
        "this store has a new device identity (id \(renewal.id), key \(renewal.key)), replacing \(renewal.previousID) that it was copied or restored with; run `credstore device trust \(renewal.key)` on your other machines, then `credstore sync` there. It trusts its previous key \(renewal.previousKey) as another device"
    }

    /// `credstore device reset`, with the options that name the same store.
    static func resetCommand(_ global: GlobalOptions) -> String {
        var command = "credstore device reset"
        if let store = global.store { command += " --store \(ShellWords.quoted(store))" }
        if let keyFile = global.keyFile { command += " --key-file \(ShellWords.quoted(keyFile))" }
        return command
    }

    /// `credstore device show`: prints the device id and the public key other stores export to.
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print this store's device id and public key (give the key to your other machines).")

        @OptionGroup var global: GlobalOptions

        func run() throws {
            let console = Console.current
            // It only reads: a mistyped --store must not create a store and print a key no other
            // machine should trust.
            let location = global.location(in: console)
            let storage = try location.openExisting(console, orFail: CommandFailure(.notFound,
                "there is no store at \(location.path), so it has no device key; check --store, or create the store with `credstore init`"))
            // A copy or a restore on another machine or home shows the identity it will sync with.
            if let renewal = try storage.sync.settleIdentity() {
                console.errors.write("credstore: note: \(DeviceCommand.announce(renewal))\n")
            }
            let (id, key) = (try storage.sync.deviceID, try storage.sync.deviceKey.description)
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
            let deviceKey = try DeviceKey(key)
            let storage = try global.location(in: console).openOrCreate(console)
            try storage.sync.trust(deviceKey)
            if !global.json { console.output.write("Trusted \(deviceKey)\n") }
        }
    }

    /// `credstore device list`: the trusted devices, when each was trusted and last merged, then
    /// the revoked ones, by whom and when.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the devices this store trusts (key, when trusted, when a bundle of theirs was last merged), then the revoked ones (by whom, when).")

        @OptionGroup var global: GlobalOptions

        func run() throws {
            let console = Console.current
            let storage = try global.location(in: console).openExisting(console, orFail: CommandFailure(.notFound, "there is no store here, so no device is trusted; `credstore device trust` makes one"))
            let devices = try storage.sync.trustedDevices()
            let revoked = try storage.sync.revokedDevices()
            let thisDevice = try storage.sync.deviceKey
            func revoker(_ revocation: DeviceRevocation) -> String {
                revocation.revokedBy == thisDevice ? "this device" : revocation.revokedBy.description
            }
            if global.json {
                let trusted = devices.map { device in
                    JSONValue.object([
                        ("publicKey", .string(device.key.description)), ("status", .string("trusted")),
                        ("trusted", .string(device.trusted.map(Describe.timestamp))),
                        ("lastMerged", .string(device.lastMerged.map(Describe.timestamp))),
                    ])
                }
                let revokedRows = revoked.map { revocation in
                    JSONValue.object([
                        ("publicKey", .string(revocation.key.description)), ("status", .string("revoked")),
                        ("revokedBy", .string(revocation.revokedBy.description)), ("revoked", .string(Describe.timestamp(revocation.revoked))),
                    ])
                }
                console.output.write(JSONValue.array(trusted + revokedRows).rendered + "\n")
                return
            }
            if devices.isEmpty {
                console.output.write("No trusted devices\n")
            } else {
                var table = Table(header: ["KEY", "TRUSTED", "LAST MERGED"])
                for device in devices {
                    table.rows.append([
                        device.key.description, device.trusted.map(Describe.timestamp) ?? "unknown",
                        device.lastMerged.map(Describe.timestamp) ?? "never",
                    ])
                }
                console.output.write(table.rendered)
            }
            if !revoked.isEmpty {
                var table = Table(header: ["REVOKED KEY", "REVOKED BY", "WHEN"])
                for revocation in revoked {
                    table.rows.append([revocation.key.description, revoker(revocation), Describe.timestamp(revocation.revoked)])
                }
                console.output.write("\n" + table.rendered)
            }
        }
    }

    /// `credstore device untrust KEY`: refuses that device's bundles and stops sealing to it.
    struct Untrust: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop trusting a device: refuse its bundles, and seal no later bundle to it.",
            discussion: """
                The device keeps everything it already received: change the passwords of the \
                synchronizable credentials at their services if it was lost (docs/sync-format.md).
                """)

        @Argument(help: ArgumentHelp("The device's key, as `credstore device list` prints it.", valueName: "key"))
        var key: String

        @OptionGroup var global: GlobalOptions

        func run() throws {
            let console = Console.current
            // A mistyped key is refused before the store is opened.
            let deviceKey = try DeviceKey(key)
            let storage = try global.location(in: console).openExisting(console, orFail: CommandFailure(.notFound, "there is no store here, so no device is trusted; `credstore device trust` makes one"))
            try storage.sync.untrust(deviceKey)
            if !global.json {
                console.output.write("Untrusted \(deviceKey)\nThe revocation travels with this store's next `credstore sync`: every device that trusts this one stops sealing to it on its own next sync.\nIt keeps what it already received: change the synchronizable passwords it could read if it was lost.\n")
            }
        }
    }

    /// `credstore device reset`: gives this store a new device identity.
    struct Reset: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give this store a new device id and key (for a copy of a store that lives beside the original).",
            discussion: """
                The credentials, trusted devices and sync state stay; the store trusts its previous \
                key as another device. Run `credstore device trust` with the new key on your other \
                machines. `sync` asks for this when its folder holds this store's bundle as a copy \
                of the store wrote it.
                """)

        @OptionGroup var global: GlobalOptions

        func run() throws {
            let console = Console.current
            let location = global.location(in: console)
            let storage = try location.openExisting(console, orFail: CommandFailure(.notFound,
                "there is no store at \(location.path), so it has no device identity; check --store"))
            let renewal = try storage.sync.resetIdentity()
            console.output.write(global.json
                ? JSONValue.object([
                    ("deviceId", .string(renewal.id)), ("publicKey", .string(renewal.key.description)),
                    ("previousDeviceId", .string(renewal.previousID)), ("previousPublicKey", .string(renewal.previousKey.description)),
                ]).rendered + "\n"
                : "device id:  \(renewal.id)\npublic key: \(renewal.key)\nReplaced \(renewal.previousID), whose key this store now trusts as another device. Run `credstore device trust \(renewal.key)` on your other machines.\n")
        }
    }
}
