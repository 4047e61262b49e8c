import CredentialStoreTestSupport
import Foundation
import Testing

/// `credstore identity`, `pin` and `curl-args` against a real TLS server that requires a client
/// certificate (`openssl s_server -Verify`), with the real curl: the store's identity gets in,
/// nothing else does, and pins decide which server keys curl accepts.
@Suite(.serialized) struct TLSCommandTests {
    static let curl = URL(fileURLWithPath: "/usr/bin/curl")

    /// A sandbox whose store holds the PKI's client identity for 127.0.0.1, imported from a
    /// PKCS #12 file made by `openssl pkcs12 -export`.
    private func storeWithIdentity(_ pki: TestPKI) throws -> Sandbox {
        let sandbox = try Sandbox()
        try pki.openssl(["pkcs12", "-export", "-in", "client.pem", "-inkey", "client.key", "-certfile", "ca.pem",
                         "-passout", "pass:p12 secret", "-out", "client.p12"])
        let imported = try sandbox.run(["identity", "import", pki.url("client.p12").path, "--host", "127.0.0.1", "--json"] + sandbox.storeArguments,
                                       stdin: "p12 secret\n")
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try jsonObject(imported.stdout)["subject"] as? String == "CN=credstore test client")
        return sandbox
    }

    /// curl with `arguments`, fetching the server's status page; its exit status and output.
    private func fetch(_ server: TLSTestServer, _ arguments: [String], sandbox: Sandbox) throws -> (status: Int32, body: String) {
        let result = try sandbox.runProgram(Self.curl, ["--silent", "--show-error", "--max-time", "20", "--write-out", "%{http_code}"] + arguments
                                            + ["https://127.0.0.1:\(server.port)/"])
        return (result.status, result.stdout)
    }

    /// What `curl-args` prints, split into curl's arguments (the paths hold no spaces).
    private func curlArguments(_ sandbox: Sandbox, _ port: Int) throws -> [String] {
        let printed = try sandbox.run(["curl-args", "https://127.0.0.1:\(port)/", "--dir", sandbox.root.appendingPathComponent("curl").path] + sandbox.storeArguments)
        #expect(printed.status == 0, "\(printed.stderr)")
        return printed.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
    }

    @Test func curlWithTheStoresIdentityGetsInAndWithoutItDoesNot() throws {
        let pki = try TestPKI()
        let server = try TLSTestServer(pki: pki, certificate: "server.pem", key: "server.key")
        let sandbox = try storeWithIdentity(pki)
        let caFile = ["--cacert", pki.url("ca.pem").path]

        let without = try fetch(server, caFile, sandbox: sandbox)
        #expect(without.status != 0, "the server requires a client certificate: \(without.body)")

        let arguments = try curlArguments(sandbox, server.port)
        #expect(arguments.contains("--cert") && arguments.contains("--key"))
        // Paths on the command line, never the key.
        #expect(!arguments.joined().contains("PRIVATE KEY"))
        let keyFile = try #require(arguments.firstIndex(of: "--key").map { arguments[$0 + 1] })
        #expect(sandbox.mode(of: URL(fileURLWithPath: keyFile)) & 0o777 == 0o600)
        let with = try fetch(server, caFile + arguments, sandbox: sandbox)
        #expect(with.status == 0, "\(with.body)")
        #expect(with.body.hasSuffix("200"))

        // The same with files from `identity export`.
        let cert = sandbox.root.appendingPathComponent("exported.crt"), key = sandbox.root.appendingPathComponent("exported.key")
        let exported = try sandbox.run(["identity", "export", "--host", "127.0.0.1", "--cert-out", cert.path, "--key-out", key.path] + sandbox.storeArguments)
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(exported.stdout.isEmpty, "the key is never printed")
        #expect(sandbox.mode(of: key) & 0o777 == 0o600)
        let withExported = try fetch(server, caFile + ["--cert", cert.path, "--key", key.path], sandbox: sandbox)
        #expect(withExported.body.hasSuffix("200"), "\(withExported.body)")
        // An export never writes over an existing file.
        let again = try sandbox.run(["identity", "export", "--host", "127.0.0.1", "--cert-out", cert.path, "--key-out", key.path] + sandbox.storeArguments)
        #expect(again.status == 74)
    }

    @Test func aWrongPKCS12PasswordIsRefusedAndStoresNothing() throws {
        let pki = try TestPKI()
        let sandbox = try Sandbox()
        try pki.openssl(["pkcs12", "-export", "-in", "client.pem", "-inkey", "client.key", "-passout", "pass:right one", "-out", "client.p12"])
        let wrong = try sandbox.run(["identity", "import", pki.url("client.p12").path, "--host", "api.example.com"] + sandbox.storeArguments,
                                    stdin: "wrong one\n")
        #expect(wrong.status == 77)
        #expect(wrong.stderrIsOneErrorLine)
        #expect(wrong.stderr.contains("password"))
        #expect(!wrong.stderr.contains("wrong one") && !wrong.stderr.contains("right one"))
        #expect(try sandbox.run(["identity", "list", "--json"] + sandbox.storeArguments).stdout == "[]\n")
        // A PEM file whose key is not the certificate's is refused by name.
        try pki.sh("cat client.pem server.key > mismatched.pem")
        let mismatched = try sandbox.run(["identity", "import", pki.url("mismatched.pem").path, "--host", "api.example.com"] + sandbox.storeArguments)
        #expect(mismatched.status == 65)
        #expect(mismatched.stderr.contains("does not belong to the leaf certificate"))
    }

    @Test func pinsDecideWhichServerKeyCurlAcceptsAndABackupPinSurvivesARotation() throws {
        let pki = try TestPKI()
        var server = try TLSTestServer(pki: pki, certificate: "server.pem", key: "server.key")
        let sandbox = try storeWithIdentity(pki)
        let caFile = ["--cacert", pki.url("ca.pem").path]
        let currentPin = "sha256//" + (try pki.sh("openssl pkey -in server.key -pubout -outform der | openssl dgst -sha256 -binary | base64"))
        let backupPin = "sha256//" + (try pki.sh("openssl pkey -in backup.key -pubout -outform der | openssl dgst -sha256 -binary | base64"))

        // --from-server shows the key the server presents, and stores it only with --yes.
        let shown = try sandbox.run(["pin", "add", "127.0.0.1:\(server.port)", "--from-server"] + sandbox.storeArguments)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("pin: \(currentPin)"), "\(shown.stdout)")
        #expect(shown.stdout.contains("Nothing stored"))
        #expect(try sandbox.run(["pin", "list", "--json"] + sandbox.storeArguments).stdout == "[]\n")

        // A wrong pin: curl refuses the server.
        let wrongPin = "sha256//" + Data(repeating: 7, count: 32).base64EncodedString()
        #expect(try sandbox.run(["pin", "add", "127.0.0.1", wrongPin] + sandbox.storeArguments).status == 0)
        let refused = try fetch(server, caFile + (try curlArguments(sandbox, server.port)), sandbox: sandbox)
        #expect(refused.status == 90, "curl's 'pinned public key does not match': \(refused)")
        #expect(try sandbox.run(["pin", "remove", "127.0.0.1"] + sandbox.storeArguments).status == 0)

        // The current key, confirmed, and a backup key not yet in use.
        let confirmed = try sandbox.run(["pin", "add", "127.0.0.1", "--from-server", "--yes"] + sandbox.storeArguments)
        #expect(confirmed.status != 0, "no port: 443, where nothing listens")
        #expect(try sandbox.run(["pin", "add", "127.0.0.1:\(server.port)", "--from-server", "--yes"] + sandbox.storeArguments).status == 0)
        // Pins stored for one port are that port's: copy them to the host, with the backup.
        #expect(try sandbox.run(["pin", "add", "127.0.0.1", currentPin, backupPin] + sandbox.storeArguments).status == 0)
        let listed = try jsonArray(try sandbox.run(["pin", "list", "--json"] + sandbox.storeArguments).stdout)
        #expect(listed.contains { ($0["pins"] as? [String]) == [currentPin] && $0["port"] as? Int == server.port })
        #expect(listed.contains { Set($0["pins"] as? [String] ?? []) == [currentPin, backupPin] && $0["port"] is NSNull })
        #expect(try sandbox.run(["pin", "remove", "127.0.0.1:\(server.port)"] + sandbox.storeArguments).status == 0)

        let arguments = try curlArguments(sandbox, server.port)
        #expect(arguments.contains("--pinnedpubkey"))
        #expect(try fetch(server, caFile + arguments, sandbox: sandbox).body.hasSuffix("200"))

        // The server moves to the backup key: the backup pin lets curl in, the old pin alone does not.
        server.stop()
        server = try TLSTestServer(pki: pki, certificate: "backup.pem", key: "backup.key")
        #expect(try fetch(server, caFile + (try curlArguments(sandbox, server.port)), sandbox: sandbox).body.hasSuffix("200"))
        #expect(try sandbox.run(["pin", "remove", "127.0.0.1", backupPin] + sandbox.storeArguments).status == 0)
        #expect(try fetch(server, caFile + (try curlArguments(sandbox, server.port)), sandbox: sandbox).status == 90)
    }

    @Test func anAnchorLetsCurlTrustAPrivateCAWithoutCacert() throws {
        let pki = try TestPKI()
        let server = try TLSTestServer(pki: pki, certificate: "server.pem", key: "server.key")
        let sandbox = try storeWithIdentity(pki)
        #expect(try sandbox.run(["pin", "add", "127.0.0.1", "--anchor", pki.url("ca.pem").path] + sandbox.storeArguments).status == 0)
        let arguments = try curlArguments(sandbox, server.port)
        #expect(arguments.contains("--cacert"))
        #expect(try fetch(server, arguments, sandbox: sandbox).body.hasSuffix("200"))
        let config = try sandbox.run(["curl-args", "--config", "https://127.0.0.1:\(server.port)/", "--dir", sandbox.root.appendingPathComponent("curl").path] + sandbox.storeArguments)
        #expect(config.stdout.contains("cacert = \""))
        #expect(config.stdout.contains("key = \""))
    }

    // MARK: What an outsider's attack found

    @Test func anExportGoesOnlyToANewFileOrADescriptorTheCallerPassed() throws {
        let pki = try TestPKI()
        let sandbox = try storeWithIdentity(pki)
        let cert = sandbox.root.appendingPathComponent("c.pem")
        let arguments = ["identity", "export", "--host", "127.0.0.1", "--cert-out", cert.path] + sandbox.storeArguments
        // Through a shell that closes or opens descriptor 3 itself: the test runner's own open
        // files would otherwise be inherited.
        func export(_ keyOut: String, redirect: String) throws -> RunResult {
            let command = ([Sandbox.binary.path] + arguments + ["--key-out", keyOut]).map { "'\($0)'" }.joined(separator: " ")
            return try sandbox.runProgram(URL(fileURLWithPath: "/bin/sh"), ["-c", "\(command) \(redirect)"])
        }
        // No descriptor 3 passed in: it must not find one of its own (the database was 3).
        let noDescriptor = try export("/dev/fd/3", redirect: "3>&-")
        #expect(noDescriptor.status == 74, "\(noDescriptor.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cert.path), "a failed export leaves no file behind")
        #expect(try sandbox.run(["verify"] + sandbox.storeArguments).status == 0, "the store is intact")
        // Standard output is refused: the key is never printed.
        let toStdout = try export("/dev/fd/1", redirect: "3>&-")
        #expect(toStdout.status == 64, "\(toStdout.stderr)")
        #expect(!toStdout.stdout.contains("PRIVATE KEY"))
        // A descriptor the caller opened is written to.
        let keyCopy = sandbox.root.appendingPathComponent("key-from-fd.pem")
        let viaShell = try export("/dev/fd/3", redirect: "3>'\(keyCopy.path)'")
        #expect(viaShell.status == 0, "\(viaShell.stderr)")
        #expect(try String(contentsOf: keyCopy, encoding: .utf8).hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(try sandbox.run(["verify"] + sandbox.storeArguments).status == 0)
    }

    @Test func cleanRemovesOnlyTheFilesCurlArgsWrote() throws {
        let pki = try TestPKI()
        let sandbox = try storeWithIdentity(pki)
        let folder = sandbox.root.appendingPathComponent("curl")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let mine = folder.appendingPathComponent("important.txt")
        try Data("keep me".utf8).write(to: mine)
        #expect(try sandbox.run(["curl-args", "https://127.0.0.1:8443/", "--dir", folder.path] + sandbox.storeArguments).status == 0)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("127.0.0.1-8443.key").path))
        #expect(try sandbox.run(["curl-args", "https://127.0.0.1:8443/", "--dir", folder.path, "--clean"] + sandbox.storeArguments).status == 0)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("127.0.0.1-8443.key").path))
        #expect(FileManager.default.fileExists(atPath: mine.path), "a file credstore did not write is kept")
        // A folder path that would inject a curl option through --config, or split in $(…), is refused.
        let injected = try sandbox.run(["curl-args", "--config", "https://127.0.0.1:8443/", "--dir", sandbox.root.path + "/a\ninsecure\nb"] + sandbox.storeArguments)
        #expect(injected.status == 65)
        #expect(!injected.stdout.contains("insecure"))
    }

    @Test func curlArgsRunTogetherEachPutWholeFilesInPlace() throws {
        let pki = try TestPKI()
        let sandbox = try storeWithIdentity(pki)
        let folder = sandbox.root.appendingPathComponent("curl")
        let arguments = ["curl-args", "https://127.0.0.1:8443/", "--dir", folder.path] + sandbox.storeArguments
        let runs = try (0..<8).map { _ in try ChildProcess(Sandbox.binary, arguments, environment: sandbox.environment) }
        for run in runs {
            let result = run.wait(timeout: .seconds(120))
            #expect(result.status == 0 && !result.killedBySignal, "\(result.stderr)")
        }
        let key = folder.appendingPathComponent("127.0.0.1-8443.key")
        let written = try Data(contentsOf: key)
        #expect(try sandbox.run(arguments).status == 0)
        #expect(try Data(contentsOf: key) == written, "a run put a partial key file in place")
        #expect(sandbox.mode(of: key) == 0o600)
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(left.sorted() == ["127.0.0.1-8443.crt", "127.0.0.1-8443.key"], "\(left)")
    }

    @Test func aPKCS12WithoutACertificateIsRefusedNotACrash() throws {
        let pki = try TestPKI()
        let sandbox = try Sandbox()
        try pki.openssl(["pkcs12", "-export", "-inkey", "client.key", "-nocerts", "-passout", "pass:p12 secret", "-out", "nocerts.p12"])
        let result = try sandbox.run(["identity", "import", pki.url("nocerts.p12").path, "--host", "api.example.com"] + sandbox.storeArguments,
                                     stdin: "p12 secret\n")
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderrIsOneErrorLine)
        #expect(result.stderr.contains("no certificate"))
    }

    @Test func aCertificatesTextCannotDriveTheTerminal() throws {
        let pki = try TestPKI()
        let sandbox = try Sandbox()
        try pki.openssl(["req", "-x509", "-new", "-key", "client.key", "-subj", "/CN=evil\u{1B}]0;owned\u{07}\npin sha256:fake", "-days", "2", "-out", "evil.pem"])
        try pki.sh("cat evil.pem client.key > evil-identity.pem")
        let imported = try sandbox.run(["identity", "import", pki.url("evil-identity.pem").path, "--host", "api.example.com"] + sandbox.storeArguments)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(!imported.stdout.contains("\u{1B}") && !imported.stdout.contains("\u{07}"))
        #expect(imported.stdout.split(separator: "\n").count == 1, "one line: \(imported.stdout)")
        let listed = try sandbox.run(["identity", "list"] + sandbox.storeArguments)
        #expect(!listed.stdout.contains("\u{1B}"))
    }

    // MARK: credstore-tls, which credstore runs for these commands

    /// The built `credstore`, and `credstore-tls` where `helperAt` says, in folders of the
    /// sandbox: the layout of a build folder or of an install. Hard links where the file system
    /// allows (a process sees the path it was run by, as with a copy), copies where it does not.
    private func layout(_ sandbox: Sandbox, tool: String, helperAt helper: String?) throws -> URL {
        let binary = try place(Sandbox.binary, at: tool, in: sandbox)
        if let helper { _ = try place(Sandbox.binary.deletingLastPathComponent().appendingPathComponent("credstore-tls"), at: helper, in: sandbox) }
        return binary
    }

    /// `source` at `path` in the sandbox, linked or copied.
    private func place(_ source: URL, at path: String, in sandbox: Sandbox) throws -> URL {
        let target = sandbox.root.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        do { try FileManager.default.linkItem(at: source, to: target) } catch { try FileManager.default.copyItem(at: source, to: target) }
        return target
    }

    @Test func withoutCredstoreTLSTheTLSCommandsSayWhatIsMissingAndChangeNothing() throws {
        let sandbox = try Sandbox()
        let alone = try layout(sandbox, tool: "alone/credstore", helperAt: nil)
        let pin = "sha256//" + Data(repeating: 7, count: 32).base64EncodedString()
        for command in [["identity", "list"], ["identity", "import", "/dev/null", "--host", "a.example"], ["pin", "add", "a.example", pin],
                        ["pin", "list"], ["curl-args", "https://a.example/"]] {
            let result = try sandbox.runProgram(alone, command + sandbox.storeArguments)
            #expect(result.status == 69, "\(command): \(result.stderr)")
            #expect(result.stderrIsOneErrorLine)
            #expect(result.stderr.contains("credstore-tls is not installed"), "\(command): \(result.stderr)")
            #expect(result.stderr.contains(sandbox.root.appendingPathComponent("alone/credstore-tls").path))
        }
        #expect(!FileManager.default.fileExists(atPath: sandbox.store.path), "a refused TLS command made a store")
        // What needs no certificate works without it.
        #expect(try sandbox.runProgram(alone, ["add", "https://a.example", "--user", "u"] + sandbox.storeArguments, stdin: "pw\n").status == 0)
        #expect(try sandbox.runProgram(alone, ["get", "https://a.example"] + sandbox.storeArguments).stdout == "pw\n")
        #expect(try sandbox.runProgram(alone, ["pin", "remove", "a.example"] + sandbox.storeArguments).status == 1)
    }

    @Test func aPlainCredstoreInTheHelpersPlaceSaysSoRatherThanHandingTheCommandOnForEver() throws {
        let sandbox = try Sandbox()
        let binary = try layout(sandbox, tool: "wrong/credstore", helperAt: nil)
        // credstore itself where credstore-tls belongs, as a mistaken copy would put it.
        _ = try place(Sandbox.binary, at: "wrong/credstore-tls", in: sandbox)
        // Bounded: handing the command on for ever would keep one process busy until killed.
        let result = try runProcess(binary, ["pin", "list"] + sandbox.storeArguments, environment: sandbox.environment, timeout: .seconds(60))
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("credstore: credstore handed this command to "), "\(result.stderr)")
        #expect(result.stderr.contains("wrong/credstore-tls, which is not credstore-tls"), "\(result.stderr)")
        #expect(result.stderr.trimmingCharacters(in: .newlines).split(separator: "\n").count == 1, "one line: \(result.stderr)")
    }

    @Test func aHelperAnotherUserCouldHaveChangedIsNotRun() throws {
        let sandbox = try Sandbox()
        let helper = Sandbox.binary.deletingLastPathComponent().appendingPathComponent("credstore-tls")
        // Copies, not links: their modes change here, the build's files must not.
        let open = try layout(sandbox, tool: "open/credstore", helperAt: nil)
        let openHelper = sandbox.root.appendingPathComponent("open/credstore-tls")
        try FileManager.default.copyItem(at: helper, to: openHelper)
        chmod(openHelper.path, 0o777)
        let refused = try sandbox.runProgram(open, ["pin", "list"] + sandbox.storeArguments)
        #expect(refused.status == 77, "\(refused.stderr)")
        #expect(refused.stderrIsOneErrorLine)
        #expect(refused.stderr.contains("\(openHelper.path) can be written by others (mode 777)"), "\(refused.stderr)")

        // A folder above it that others can write, without the sticky bit.
        let shared = try layout(sandbox, tool: "shared/bin/credstore", helperAt: nil)
        try FileManager.default.copyItem(at: helper, to: sandbox.root.appendingPathComponent("shared/bin/credstore-tls"))
        chmod(sandbox.root.appendingPathComponent("shared").path, 0o777)
        let folder = try sandbox.runProgram(shared, ["pin", "list"] + sandbox.storeArguments)
        #expect(folder.status == 77, "\(folder.stderr)")
        #expect(folder.stderr.contains("\(sandbox.root.appendingPathComponent("shared").path) can be written by others"), "\(folder.stderr)")

        // Another user's, where the test may give it away.
        guard getuid() == 0 else { return }
        let foreign = try layout(sandbox, tool: "foreign/credstore", helperAt: nil)
        let foreignHelper = sandbox.root.appendingPathComponent("foreign/credstore-tls")
        try FileManager.default.copyItem(at: helper, to: foreignHelper)
        chown(foreignHelper.path, 65534, 65534)
        let owned = try sandbox.runProgram(foreign, ["pin", "list"] + sandbox.storeArguments)
        #expect(owned.status == 77, "\(owned.stderr)")
        #expect(owned.stderr.contains("belongs to another user (uid 65534)"), "\(owned.stderr)")
    }

    @Test func aFolderNamedLikeTheHelperIsPassedOver() throws {
        let sandbox = try Sandbox()
        let binary = try layout(sandbox, tool: "prefix/bin/credstore", helperAt: "prefix/libexec/credstore/credstore-tls")
        try FileManager.default.createDirectory(at: sandbox.root.appendingPathComponent("prefix/bin/credstore-tls"), withIntermediateDirectories: true)
        let listed = try sandbox.runProgram(binary, ["pin", "list"] + sandbox.storeArguments)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout == "No pins\n")
    }

    @Test func credstoreRunsTheHelperBesideItOrInLibexecAsInstalled() throws {
        let pki = try TestPKI()
        let sandbox = try Sandbox()
        try pki.sh("cat client.pem client.key > identity.pem")
        for (tool, helper) in [("build/credstore", "build/credstore-tls"), ("prefix/bin/credstore", "prefix/libexec/credstore/credstore-tls")] {
            let binary = try layout(sandbox, tool: tool, helperAt: helper)
            let imported = try sandbox.runProgram(binary, ["identity", "import", pki.url("identity.pem").path, "--host", "a.example", "--json"] + sandbox.storeArguments)
            #expect(imported.status == 0, "\(tool): \(imported.stderr)")
            #expect(try jsonObject(imported.stdout)["subject"] as? String == "CN=credstore test client")
            let listed = try sandbox.runProgram(binary, ["identity", "list"] + sandbox.storeArguments)
            #expect(listed.stdout.contains("CN=credstore test client"), "\(tool): \(listed.stderr)")
        }
    }
}
