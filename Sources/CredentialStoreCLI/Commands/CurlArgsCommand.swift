import ArgumentParser
import CredentialStore
import CredentialStoreTLS
import Foundation
#if canImport(Glibc)
// `struct stat` is CoreFoundation's declaration once swift-nio's modules are in the build: the
// member-import check wants the module that declares it.
import CoreFoundation
import Glibc
#endif

/// `credstore curl-args URL`: curl's `--cert/--key/--pinnedpubkey/--cacert` for a server, from
/// the store, with no secret on curl's command line.
struct CurlArgsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "curl-args",
        _superCommandName: CredstoreCommand.name,
        abstract: "Print curl's TLS arguments for a URL: the client identity's files and the server's pins.",
        discussion: """
            The identity's certificate and key are written as PEM to new 0600 files in a 0700 \
            folder under $XDG_RUNTIME_DIR (a tmpfs that the system empties at logout) or --dir, \
            and their paths printed: the key is never on curl's command line, only its path. \
            Pins become --pinnedpubkey (curl checks the server certificate's own key against \
            them); stored anchors become --cacert, a file of the system's roots and the anchors. \
            Use: curl $(credstore curl-args https://host) https://host, or with --config: \
            curl -K <(credstore curl-args --config https://host) https://host. Remove the files \
            with --clean.
            """)

    @Argument(help: ArgumentHelp("The URL curl will fetch.", valueName: "url"))
    var url: String

    @Flag(help: "Print a curl config file (for curl -K) instead of arguments.")
    var config = false

    @Option(help: ArgumentHelp("The folder for the PEM files (default $XDG_RUNTIME_DIR/credstore-curl).", valueName: "path"))
    var dir: String?

    @Flag(help: "Remove the folder of PEM files and print nothing.")
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
        let folder = try filesFolder(console)
        // A path curl reads from a config line or from `$(…)` word splitting: a line break would
        // start a curl option of its own (`insecure`), white space would split the path.
        guard !folder.contains(where: { $0.isWhitespace || $0.isNewline || $0.unicodeScalars.contains { $0.properties.generalCategory == .control } }) else {
            throw CommandFailure(.dataError, "the folder for curl's files holds white space or a control character; give --dir a plain path")
        }
        if clean {
            try removeOurFiles(folder)
            return
        }
        let storage = try global.location(in: console).openIfPresent(console)
        let identity = try storage?.identity(forHost: host, port: port)
        let trust = try storage?.serverTrust(forHost: host, port: port)

        var arguments: [(String, String)] = []
        if let identity {
            try makeFolder(folder)
            let name = "\(Self.fileName(host))-\(port)"
            let certificate = "\(folder)/\(name).crt", key = "\(folder)/\(name).key"
            // Written afresh each time: the stored identity may have changed since the last call.
            try TLSFiles.replace(certificate, Array(identity.pemCertificates.utf8))
            try TLSFiles.replace(key, Array(identity.pemPrivateKey.utf8))
            arguments += [("cert", certificate), ("key", key)]
        }
        if let trust, !trust.pins.isEmpty {
            arguments.append(("pinnedpubkey", trust.pins.sorted().map(\.description).joined(separator: ";")))
        }
        if let trust, !trust.anchors.isEmpty {
            try makeFolder(folder)
            var bundle = Self.systemRoots.lazy.compactMap { FileManager.default.contents(atPath: $0) }.first.map { [UInt8]($0) } ?? []
            if !bundle.isEmpty, bundle.last != 0x0A { bundle.append(0x0A) }
            bundle += Array(CertificatePEM.encode(trust.anchors).utf8)
            let file = "\(folder)/\(Self.fileName(host))-\(port)-ca.pem"
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

    /// Removes the files `curl-args` writes (`HOST-PORT.crt`, `.key`, `-ca.pem`) from `folder`,
    /// and the folder once it is empty: never anything else that is there.
    private func removeOurFiles(_ folder: String) throws {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        try makeFolder(folder)  // ours and closed to others, or nothing is removed
        for name in names where Self.isOurFile(name) {
            unlink("\(folder)/\(name)")
        }
        rmdir(folder)
    }

    /// Whether `name` is a file `curl-args` writes: a host's file name, a port, and one of its
    /// three endings; or the temporary of one, which a run that died left behind.
    static func isOurFile(_ name: String) -> Bool {
        if let replaced = TLSFiles.replacedFile(ofTemporary: name) { return isOurFile(replaced) }
        for ending in ["-ca.pem", ".crt", ".key"] where name.hasSuffix(ending) {
            let stem = name.dropLast(ending.count)
            guard let dash = stem.lastIndex(of: "-"), let port = Int(stem[stem.index(after: dash)...]), (1...65535).contains(port) else { return false }
            let host = stem[..<dash]
            return !host.isEmpty && host.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_") }
        }
        return false
    }

    private func filesFolder(_ console: Console) throws -> String {
        if let dir { return dir }
        guard let runtime = console.variable("XDG_RUNTIME_DIR"), !runtime.isEmpty else {
            throw CommandFailure(.usage, "XDG_RUNTIME_DIR is not set, so there is no tmpfs folder of yours for the key file; give --dir")
        }
        return runtime + "/credstore-curl"
    }

    private func makeFolder(_ folder: String) throws {
        if mkdir(folder, 0o700) != 0, errno != EEXIST {
            throw CommandFailure(.ioError, "cannot create \(folder): \(String(cString: strerror(errno)))")
        }
        // An existing folder must be ours and closed to others: the key file goes in it.
        var info = stat()
        guard lstat(folder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == getuid(), info.st_mode & 0o077 == 0 else {
            throw CommandFailure(.noPermission, "\(folder) must be a folder of yours that no one else can open (0700)")
        }
    }

    /// A host as a file name: letters, digits, dots and dashes; anything else (an IPv6 colon) `_`.
    static func fileName(_ host: String) -> String {
        String(host.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") ? $0 : "_" })
    }

    /// A value inside a curl config file's double quotes.
    static func configEscaped(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }
}
