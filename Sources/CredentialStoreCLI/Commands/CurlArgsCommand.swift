import ArgumentParser
import CredentialStore
import CredentialStoreFormats
import Foundation

/// `credstore curl-args URL`: curl's `--cert/--key/--pinnedpubkey/--cacert` for a server, from
/// the store, with no secret on curl's command line.
struct CurlArgsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "curl-args",
        _superCommandName: CredstoreCommand.name,
        abstract: "Print curl's TLS arguments for a URL: the client identity's files and the server's pins.",
        discussion: """
            The identity's certificate and key are written as PEM to new 0600 files in a 0700 \
            folder of yours, and their paths printed: the key is never on curl's command line, \
            only its path. The folder is --dir, else $XDG_RUNTIME_DIR/credstore-curl (a tmpfs \
            that the system empties at logout), else $XDG_STATE_HOME/credstore/curl \
            (~/.local/state/credstore/curl), on disk until --clean removes the files. \
            Pins become --pinnedpubkey (curl checks the server certificate's own key against \
            them); stored anchors become --cacert, a file of the system's roots and the anchors. \
            Use: curl $(credstore curl-args https://host) https://host, or with --config: \
            curl -K <(credstore curl-args --config https://host) https://host. Remove the URL's \
            files with --clean (other servers' files stay).
            """)

    @Argument(help: ArgumentHelp("The URL curl will fetch.", valueName: "url"))
    var url: String

    @Flag(help: "Print a curl config file (for curl -K) instead of arguments.")
    var config = false

    @Option(help: ArgumentHelp("The folder for the PEM files (default $XDG_RUNTIME_DIR/credstore-curl, else ~/.local/state/credstore/curl).", valueName: "path"))
    var dir: String?

    @Flag(help: "Remove the URL's PEM files (and the folder, once empty) and print nothing.")
    var clean = false

    @OptionGroup var global: GlobalOptions

    /// The system's CA bundle on Debian and its relatives, and on Fedora's.
    static let systemRoots = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"]

    func run() throws {
        let console = Console.current
        // Read as every door reads a URL: the host curl will reach is the host a browser names.
        let parsed = try SpaceRequest(url: url).reading()
        let host = parsed.host
        let port = parsed.port ?? (parsed.scheme == "http" ? 80 : 443)
        let server = CurlFilesFolder.Server(host: host, port: port)
        let folder = dir.map(CurlFilesFolder.init(given:)) ?? CurlFilesFolder.standard(console)
        // A path curl reads from a config line or from `$(…)` word splitting: a line break would
        // start a curl option of its own (`insecure`), white space would split the path.
        guard !folder.path.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }) else {
            throw CommandFailure(.dataError, "the folder for curl's files (\(String(reflecting: folder.path))) holds white space or a control character; give --dir a plain path")
        }
        if clean {
            try folder.remove(server)
            return
        }
        // Before the store opens: a passphrase store's prompt would come again in credstore-tls.
        let tls = try TLSCommands.toolkit()
        let storage = try global.location(in: console).openIfPresent(console)
        let identity = try storage?.tls.identity(forHost: host, port: port)
        let trust = try storage?.tls.serverTrust(forHost: host, port: port)

        var arguments: [(String, String)] = []
        if let identity {
            try folder.prepare()
            let certificate = folder.file(server, ".crt"), key = folder.file(server, ".key")
            // Written afresh each time: the stored identity may have changed since the last call.
            try TLSFiles.replace(certificate, Array(tls.pem(certificates: identity.certificateChain).utf8))
            try TLSFiles.replace(key, Array(tls.pemPrivateKey(of: identity).utf8))
            arguments += [("cert", certificate), ("key", key)]
        }
        if let trust, !trust.pins.isEmpty {
            arguments.append(("pinnedpubkey", trust.pins.sorted().map(\.description).joined(separator: ";")))
        }
        if let trust, !trust.anchors.isEmpty {
            try folder.prepare()
            var bundle = Self.systemRoots.lazy.compactMap { FileManager.default.contents(atPath: $0) }.first.map { [UInt8]($0) } ?? []
            if !bundle.isEmpty, bundle.last != 0x0A { bundle.append(0x0A) }
            bundle += Array(tls.pem(certificates: trust.anchors).utf8)
            let file = folder.file(server, "-ca.pem")
            try TLSFiles.replace(file, bundle)
            arguments.append(("cacert", file))
        }
        if config {
            console.output.write(arguments.map { "\($0.0) = \"\(Self.configEscaped($0.1))\"\n" }.joined())
        } else if global.json {
            console.output.write(JSONValue.array(arguments.flatMap { [.string("--\($0.0)"), .string($0.1)] }).rendered + "\n")
        } else {
            console.output.write(arguments.map { "--\($0.0) \($0.1)" }.joined(separator: " ") + (arguments.isEmpty ? "" : "\n"))
        }
    }

    /// A value inside a curl config file's double quotes.
    static func configEscaped(_ value: String) -> String {
        value.replacingEvery("\\", with: "\\\\").replacingEvery("\"", with: "\\\"")
    }
}
