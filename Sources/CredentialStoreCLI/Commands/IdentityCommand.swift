import ArgumentParser
import CredentialStore
import Foundation

/// `credstore identity`: TLS client identities (a certificate chain and its key) per server.
struct IdentityCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identity",
        _superCommandName: CredstoreCommand.name,
        abstract: "Import, list, export or remove TLS client identities (client certificates and their keys).",
        subcommands: [Import.self, List.self, Export.self, Remove.self])

    /// `credstore identity import FILE --host H`: a PKCS #12 bundle or PEM text into the store.
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import a client certificate and its key from a PKCS #12 (.p12/.pfx) or PEM file.",
            discussion: """
                A PEM file holds the certificate (then its intermediates) and the private key, \
                unencrypted. A PKCS #12 file's password is read like a password: one line of \
                standard input, or a prompt that does not echo. The key is checked against the \
                certificate, sealed in the store, and never written anywhere in the clear.
                """)

        @Argument(help: ArgumentHelp("The .p12/.pfx or .pem file.", valueName: "file"))
        var file: String

        @OptionGroup var endpoint: EndpointOptions

        @Option(help: "Where the identity is kept: permanent (this machine) or synchronizable (also exported); a new identity is permanent, a replaced one keeps its tier.")
        var persistence: PersistenceName?

        @Flag(help: "Confirm moving a synchronizable identity to another tier, which removes it on every synced machine.")
        var synchronizable = false

        @OptionGroup var global: GlobalOptions

        func run() throws {
            let tls = try TLSCommands.toolkit()
            let console = Console.current
            let contents = try TLSFiles.read(file)
            let identity: ClientIdentity
            if TLSFiles.isPEM(contents) {
                do { identity = try tls.identity(pem: String(decoding: contents, as: UTF8.self)) } catch { throw failure(error) }
            } else {
                let password = try console.readExistingSecret(prompt: "Password for \(file): ", what: "PKCS #12 password")
                do { identity = try tls.identity(pkcs12: contents, password: password) } catch { throw failure(error) }
            }
            let storage = try global.location(in: console).openOrCreate(console)
            let options: RemovalOptions = synchronizable ? .removeSynchronizable : []
            if let tier = persistence?.persistence {
                try storage.tls.setIdentity(identity, for: endpoint.endpoint, persistence: tier, options: options)
            } else {
                try storage.tls.setIdentity(identity, for: endpoint.endpoint, options: options)
            }
            let summary = IdentityJSON.leafSummary(of: identity, tls)
            if global.json {
                let stored = try persistence?.persistence ?? storage.tls.identities()[endpoint.endpoint]?.persistence ?? .permanent
                console.output.write(IdentityJSON.object(endpoint.endpoint, identity, stored, tls).rendered + "\n")
            } else {
                // The subject is the certificate's text, chosen by whoever made it: escaped, as every
                // table cell is, so that it cannot drive the terminal.
                console.output.write("Imported \(summary.map { Describe.cell($0.subject) } ?? "a client identity") for \(Describe.endpoint(endpoint.endpoint))\(summary.map { ", valid until \(Describe.timestamp($0.notAfter))" } ?? "")\n")
            }
        }

        private func failure(_ error: ClientIdentityError) -> CommandFailure {
            CommandFailure(error == .wrongPassword ? .noPermission : .dataError, "\(file): \(error.description)")
        }
    }

    /// `credstore identity list`: every identity, its certificate's subject, issuer and expiry.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the stored client identities: server, subject, issuer, expiry, tier.")

        @OptionGroup var global: GlobalOptions

        func run() throws {
            let tls = try TLSCommands.toolkit()
            let console = Console.current
            guard let storage = try global.location(in: console).openIfPresent(console) else {
                console.output.write(global.json ? "[]\n" : "No client identities\n")
                return
            }
            let identities = try storage.tls.identities().sorted { $0.key.description < $1.key.description }
            if global.json {
                console.output.write(JSONValue.array(identities.map { IdentityJSON.object($0.key, $0.value.identity, $0.value.persistence, tls) }).rendered + "\n")
                return
            }
            guard !identities.isEmpty else {
                console.output.write("No client identities\n")
                return
            }
            var table = Table(header: ["SERVER", "SUBJECT", "ISSUER", "EXPIRES", "PERSISTENCE"])
            for (endpoint, item) in identities {
                let summary = IdentityJSON.leafSummary(of: item.identity, tls)
                let expires = summary.map { Describe.timestamp($0.notAfter) + ($0.notAfter <= Date() ? " (expired)" : "") } ?? "-"
                table.rows.append([Describe.endpoint(endpoint), summary?.subject ?? "?", summary?.issuer ?? "?", expires, item.persistence.rawValue])
            }
            console.output.write(table.rendered)
        }
    }

    /// `credstore identity export --host H --cert-out F --key-out F`: PEM files for tools that
    /// need files.
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write an identity's certificate chain and key as PEM, to new 0600 files or file descriptors.",
            discussion: """
                Each path is created (0600, never over an existing file) or is /dev/fd/N, a file \
                descriptor the caller opened. The key is written only where --key-out says, never \
                to standard output.
                """)

        @OptionGroup var endpoint: EndpointOptions

        @Option(help: ArgumentHelp("Where the certificate chain goes (PEM).", valueName: "path"))
        var certOut: String

        @Option(help: ArgumentHelp("Where the private key goes (PEM, PKCS #8).", valueName: "path"))
        var keyOut: String

        @OptionGroup var global: GlobalOptions

        func run() throws {
            let tls = try TLSCommands.toolkit()
            let console = Console.current
            // Both destinations first, before the store is opened (TLSFiles.openDestination), and
            // removed again if the export does not finish: nothing is left half done.
            let destinations = try TLSFiles.openDestinations([certOut, keyOut])
            let (certificate, key) = (destinations[0], destinations[1])
            do {
                guard let storage = try global.location(in: console).openIfPresent(console),
                      let identity = try storage.tls.identity(for: endpoint.endpoint) else {
                    throw CommandFailure(.notFound, "no client identity is stored for \(Describe.endpoint(endpoint.endpoint))")
                }
                try TLSFiles.write(certificate, Array(tls.pem(certificates: identity.certificateChain).utf8))
                try TLSFiles.write(key, Array(tls.pemPrivateKey(of: identity).utf8))
            } catch {
                TLSFiles.discard(certificate)
                TLSFiles.discard(key)
                throw error
            }
            TLSFiles.close(certificate)
            TLSFiles.close(key)
            if global.json {
                console.output.write(JSONValue.object([("certificate", .string(certOut)), ("key", .string(keyOut))]).rendered + "\n")
            }
        }
    }

    /// `credstore identity remove --host H`.
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove the identity stored for a server (exit 1 if there is none).")

        @OptionGroup var endpoint: EndpointOptions

        @Flag(help: "Confirm the removal of a synchronizable identity, on every synced machine.")
        var synchronizable = false

        @OptionGroup var global: GlobalOptions

        func run() throws {
            let tls = try TLSCommands.toolkit()
            let console = Console.current
            let storage = try global.location(in: console).openIfPresent(console)
            let removing = try storage?.tls.identity(for: endpoint.endpoint)
            guard let storage, let removing,
                  try storage.tls.removeIdentity(for: endpoint.endpoint, options: synchronizable ? .removeSynchronizable : []) else {
                throw CommandFailure(.notFound, "no client identity is stored for \(Describe.endpoint(endpoint.endpoint))")
            }
            if !global.json { console.output.write("Removed the client identity for \(Describe.endpoint(endpoint.endpoint))\n") }
            removeCurlFiles(holding: removing, tls, console: console)
        }

        /// `curl-args` wrote the identity's key in the clear: every server's files that hold it go
        /// with it, in each default folder, and nothing else does (a file holding another key,
        /// another store's included, stays; so does a server's `-ca.pem`). A `--dir` folder is the
        /// user's to clean (`curl-args URL --dir D --clean`).
        private func removeCurlFiles(holding identity: ClientIdentity, _ tls: any TLSToolkit, console: Console) {
            let key = Array(tls.pemPrivateKey(of: identity).utf8)
            for folder in CurlFilesFolder.standardFolders(console) {
                do {
                    try folder.removeFiles(holding: key)
                } catch {
                    console.errors.write("credstore: the identity is removed, but the files curl-args wrote of it in \(Describe.cell(folder.path)) may remain: \(Describe.cell(String(describing: error))); remove them with `credstore curl-args URL --clean`\n")
                }
            }
        }
    }
}
