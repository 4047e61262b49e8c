import ArgumentParser
import CredentialStore
import Foundation

/// `credstore pin`: what a server must present, per host: public-key pins and extra anchors.
struct PinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        _superCommandName: CredstoreCommand.name,
        abstract: "Add, list or remove the public keys (and extra trust anchors) a server must present.",
        subcommands: [Add.self, List.self, Remove.self])

    /// `credstore pin add HOST[:PORT] [PIN…] [--from-server] [--anchor FILE]`.
    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pin a server's public key (sha256//BASE64, as curl writes it), or trust an extra anchor for it.",
            discussion: """
                Pins add to those already stored for the server: keep a backup pin, of a key not \
                yet in use, so that rotating the server's key does not lock you out. With \
                --from-server, credstore connects to HOST:PORT (443 by default), shows the \
                certificates it presents and the pin of each, and stores the pin of the server's \
                own certificate only with --yes, once you have checked it against what the \
                server's operator publishes. --anchor adds the certificates of a PEM file (a \
                private CA, a self-signed server) as anchors beside the system's roots.
                """)

        @Argument(help: ArgumentHelp("The server: HOST, or HOST:PORT for one port only.", valueName: "host[:port]"))
        var server: String

        @Argument(help: ArgumentHelp("Pins to add: sha256//BASE64 (curl's --pinnedpubkey form).", valueName: "pin"))
        var pins: [String] = []

        @Flag(help: "Fetch the server's certificates and show their pins.")
        var fromServer = false

        @Flag(help: "With --from-server: store the pin shown for the server's certificate.")
        var yes = false

        @Option(help: ArgumentHelp("A PEM file of anchor certificates for this server.", valueName: "file"))
        var anchor: String?

        @Option(help: "Where the pins are kept: permanent (this machine) or synchronizable (also exported); new pins are permanent, added ones keep the tier of those there.")
        var persistence: PersistenceName?

        @Flag(help: "Confirm moving synchronizable pins to another tier, which removes them on every synced machine.")
        var synchronizable = false

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if pins.isEmpty, !fromServer, anchor == nil {
                throw ValidationError("give a pin (sha256//BASE64), --from-server or --anchor")
            }
            if yes, !fromServer { throw ValidationError("--yes confirms the pin --from-server shows; give --from-server") }
        }

        func run() throws {
            let tls = try TLSCommands.toolkit()
            let console = Console.current
            let target = try EndpointText(server)
            var added: Set<PublicKeyPin> = []
            for text in pins {
                guard let pin = PublicKeyPin(text) else {
                    throw CommandFailure(.dataError, "\(String(reflecting: text)) is not a pin; a pin is sha256// and the base64 of 32 bytes")
                }
                added.insert(pin)
            }
            var anchors: [[UInt8]] = []
            if let anchor {
                do { anchors = try tls.certificates(pem: String(decoding: try TLSFiles.read(anchor), as: UTF8.self)) } catch let error as ClientIdentityError {
                    throw CommandFailure(.dataError, "\(anchor): \(error.description)")
                }
            }
            if fromServer {
                let chain: [[UInt8]]
                do {
                    chain = try tls.serverCertificates(host: target.host, port: target.port ?? 443)
                } catch {
                    throw CommandFailure(.ioError, "could not fetch the certificates of \(target.host):\(target.port ?? 443): \(error)")
                }
                guard let leaf = chain.first, let summary = tls.summary(of: leaf) else {
                    throw CommandFailure(.dataError, "\(target.host) presented no certificate credstore can read")
                }
                if !global.json {
                    for (index, certificate) in chain.enumerated() {
                        guard let summary = tls.summary(of: certificate) else { continue }
                        let expired = summary.notAfter <= Date() ? " (expired)" : ""
                        console.output.write("\(index == 0 ? "server" : "issuer \(index)"): \(Describe.cell(summary.subject))\n  pin: \(summary.publicKeyPin)\n  valid until \(Describe.timestamp(summary.notAfter))\(expired)\n")
                    }
                }
                guard yes else {
                    if global.json {
                        console.output.write(JSONValue.object([("server", .string(Describe.endpoint(target.endpoint))),
                                                               ("pin", .string(summary.publicKeyPin.description)), ("stored", .bool(false))]).rendered + "\n")
                    } else {
                        console.output.write("Nothing stored: check the pin, then run again with --yes (or `credstore pin add \(server) \(summary.publicKeyPin)`).\n")
                    }
                    return
                }
                added.insert(summary.publicKeyPin)
            }
            let storage = try global.location(in: console).openOrCreate(console)
            var trust = try storage.tls.serverTrust(for: target.endpoint) ?? ServerTrust()
            trust.pins.formUnion(added)
            for certificate in anchors where !trust.anchors.contains(certificate) { trust.anchors.append(certificate) }
            let options: RemovalOptions = synchronizable ? .removeSynchronizable : []
            if let tier = persistence?.persistence {
                try storage.tls.setServerTrust(trust, for: target.endpoint, persistence: tier, options: options)
            } else {
                try storage.tls.setServerTrust(trust, for: target.endpoint, options: options)
            }
            if global.json {
                let stored = try persistence?.persistence ?? storage.tls.serverTrusts()[target.endpoint]?.persistence ?? .permanent
                console.output.write(PinJSON.object(target.endpoint, trust, stored, tls).rendered + "\n")
            } else {
                console.output.write("\(Describe.endpoint(target.endpoint)): \(trust.pins.count) pin(s), \(trust.anchors.count) anchor(s)\(trust.pins.count == 1 ? "; add a backup pin before the server's key changes" : "")\n")
            }
        }
    }

    /// `credstore pin list`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the pins and anchors stored per server.")

        @OptionGroup var global: GlobalOptions

        func run() throws {
            let tls = try TLSCommands.toolkit()
            let console = Console.current
            let trusts = try global.location(in: console).openIfPresent(console)?.tls.serverTrusts().sorted { $0.key.description < $1.key.description } ?? []
            if global.json {
                console.output.write(JSONValue.array(trusts.map { PinJSON.object($0.key, $0.value.trust, $0.value.persistence, tls) }).rendered + "\n")
                return
            }
            guard !trusts.isEmpty else {
                console.output.write("No pins\n")
                return
            }
            var table = Table(header: ["SERVER", "PIN OR ANCHOR", "PERSISTENCE"])
            for (endpoint, item) in trusts {
                for pin in item.trust.pins.sorted() {
                    table.rows.append([Describe.endpoint(endpoint), pin.description, item.persistence.rawValue])
                }
                for anchor in item.trust.anchors {
                    table.rows.append([Describe.endpoint(endpoint), "anchor " + (tls.summary(of: anchor)?.subject ?? "?"), item.persistence.rawValue])
                }
            }
            console.output.write(table.rendered)
        }
    }

    /// `credstore pin remove HOST[:PORT] [PIN…]`.
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove pins of a server, or everything stored for it (exit 1 if nothing was).")

        @Argument(help: ArgumentHelp("The server, as `pin add` named it.", valueName: "host[:port]"))
        var server: String

        @Argument(help: ArgumentHelp("The pins to remove; none: the pins and anchors, all of them.", valueName: "pin"))
        var pins: [String] = []

        @Flag(help: "Confirm the removal of synchronizable pins, on every synced machine.")
        var synchronizable = false

        @OptionGroup var global: GlobalOptions

        func run() throws {
            let console = Console.current
            let target = try EndpointText(server)
            let removing = try pins.map { text -> PublicKeyPin in
                guard let pin = PublicKeyPin(text) else { throw CommandFailure(.dataError, "\(String(reflecting: text)) is not a pin") }
                return pin
            }
            let options: RemovalOptions = synchronizable ? .removeSynchronizable : []
            guard let storage = try global.location(in: console).openIfPresent(console),
                  let item = try storage.tls.serverTrusts()[target.endpoint] else {
                throw CommandFailure(.notFound, "nothing is pinned for \(Describe.endpoint(target.endpoint))")
            }
            var trust = item.trust
            guard removing.allSatisfy(trust.pins.contains) else {
                throw CommandFailure(.notFound, "\(Describe.endpoint(target.endpoint)) has no such pin; `credstore pin list` shows them")
            }
            trust.pins.subtract(removing)
            if removing.isEmpty || (trust.pins.isEmpty && trust.anchors.isEmpty) {
                try storage.tls.removeServerTrust(for: target.endpoint, options: options)
            } else {
                if item.persistence == .synchronizable, !synchronizable {
                    throw CredentialStorageError(.synchronizableRemovalNeedsOption, "these pins are synchronizable: removing one removes it on every synced machine")
                }
                try storage.tls.setServerTrust(trust, for: target.endpoint, persistence: item.persistence)
            }
            if !global.json { console.output.write("Removed \(removing.isEmpty ? "everything pinned" : "\(removing.count) pin(s)") for \(Describe.endpoint(target.endpoint))\n") }
        }
    }
}
