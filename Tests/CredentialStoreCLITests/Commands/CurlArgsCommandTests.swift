import CredentialStoreTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `credstore curl-args` where its files go: a folder of the user's own without
/// `XDG_RUNTIME_DIR` (cron, containers, ssh without systemd), none that others can open or that
/// points elsewhere, and `--clean` of one URL that leaves every other server's files.
@Suite(.serialized) struct CurlArgsCommandTests {
    /// A sandbox whose store holds the PKI's client identity for each of `hosts` (every port),
    /// and no `XDG_RUNTIME_DIR`.
    private func storeWithIdentity(_ pki: TestPKI, hosts: [String] = ["127.0.0.1"]) throws -> Sandbox {
        let sandbox = try Sandbox()
        sandbox.environment["XDG_RUNTIME_DIR"] = nil
        sandbox.environment["XDG_STATE_HOME"] = nil
        _ = try pki.sh("cat client.pem client.key > identity.pem")
        for host in hosts {
            let imported = try sandbox.run(["identity", "import", pki.url("identity.pem").path, "--host", host] + sandbox.storeArguments)
            #expect(imported.status == 0, "\(imported.stderr)")
        }
        return sandbox
    }

    /// Where the files go without `XDG_RUNTIME_DIR` and `XDG_STATE_HOME`, as docs/cli.md says.
    private func fallbackFolder(_ sandbox: Sandbox) -> URL {
        sandbox.root.appendingPathComponent("home/.local/state/credstore/curl", isDirectory: true)
    }

    /// The path after `option` in what `curl-args` printed.
    private func path(after option: String, in arguments: [String]) throws -> URL {
        let index = try #require(arguments.firstIndex(of: option), "\(option) in \(arguments)")
        return URL(fileURLWithPath: arguments[index + 1])
    }

    @Test func withoutARuntimeFolderCurlGetsItsIdentityFromAPrivateFolderOfTheUsers() throws {
        let pki = try TestPKI()
        let server = try TLSTestServer(pki: pki, certificate: "server.pem", key: "server.key")
        let sandbox = try storeWithIdentity(pki)
        let url = "https://127.0.0.1:\(server.port)/"
        // Unset, then set but empty: both are "no runtime folder".
        for extra in [[:], ["XDG_RUNTIME_DIR": ""]] {
            let printed = try sandbox.run(["curl-args", url] + sandbox.storeArguments, environment: extra)
            #expect(printed.status == 0, "\(printed.stderr)")
            let arguments = printed.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
            let certificate = try path(after: "--cert", in: arguments), key = try path(after: "--key", in: arguments)
            let folder = fallbackFolder(sandbox)
            #expect(key.deletingLastPathComponent().path == folder.path, "\(key.path)")
            #expect(certificate.deletingLastPathComponent().path == folder.path, "\(certificate.path)")
            #expect(sandbox.mode(of: key) == 0o600)
            #expect(sandbox.mode(of: certificate) == 0o600)
            #expect(sandbox.mode(of: folder) == 0o700)
            let owner = try FileManager.default.attributesOfItem(atPath: folder.path)[.ownerAccountID] as? NSNumber
            #expect(owner?.uint32Value == getuid())
            #expect(try String(contentsOf: key, encoding: .utf8).contains("PRIVATE KEY"))

            // The documented use works: curl presents the identity and the server lets it in.
            let fetched = try sandbox.runProgram(URL(fileURLWithPath: "/usr/bin/curl"),
                                                 ["--silent", "--show-error", "--max-time", "20", "--write-out", "%{http_code}",
                                                  "--cacert", pki.url("ca.pem").path] + arguments + [url])
            #expect(fetched.status == 0 && fetched.stdout.hasSuffix("200"), "\(fetched.stderr)")
        }
    }

    /// The key curl-args wrote in the clear does not outlive the identity: removing it removes the
    /// files that hold its key (a port's own identity's, even where an identity of every port
    /// still serves that port), and no file that holds another key, nor one the user put there.
    @Test func removingAnIdentityRemovesTheFilesThatHoldItsKey() throws {
        let pki = try TestPKI()
        let sandbox = try storeWithIdentity(pki)
        for name in ["port", "other"] {
            _ = try pki.sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout \(name).key -out \(name).pem -days 2 -subj /CN=\(name) 2>/dev/null && cat \(name).pem \(name).key > \(name)-identity.pem")
        }
        for (file, endpoint) in [("port-identity.pem", ["--host", "127.0.0.1", "--port", "9443"]), ("other-identity.pem", ["--host", "localhost"])] {
            let imported = try sandbox.run(["identity", "import", pki.url(file).path] + endpoint + sandbox.storeArguments)
            #expect(imported.status == 0, "\(imported.stderr)")
        }
        let folder = fallbackFolder(sandbox)
        for url in ["https://127.0.0.1:8443/", "https://127.0.0.1:9443/", "https://localhost:8443/"] {
            let printed = try sandbox.run(["curl-args", url] + sandbox.storeArguments)
            #expect(printed.status == 0, "\(printed.stderr)")
        }
        try Data("not a key of credstore's".utf8).write(to: folder.appendingPathComponent("mine-1.key"))
        let files = { try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() }
        #expect(try files() == ["127.0.0.1-8443.crt", "127.0.0.1-8443.key", "127.0.0.1-9443.crt", "127.0.0.1-9443.key",
                                "localhost-8443.crt", "localhost-8443.key", "mine-1.key"])

        let port = try sandbox.run(["identity", "remove", "--host", "127.0.0.1", "--port", "9443"] + sandbox.storeArguments)
        #expect(port.status == 0 && port.stderr.isEmpty, "\(port.stderr)")
        #expect(try files() == ["127.0.0.1-8443.crt", "127.0.0.1-8443.key", "localhost-8443.crt", "localhost-8443.key", "mine-1.key"])
        let host = try sandbox.run(["identity", "remove", "--host", "127.0.0.1"] + sandbox.storeArguments)
        #expect(host.status == 0 && host.stderr.isEmpty, "\(host.stderr)")
        #expect(try files() == ["localhost-8443.crt", "localhost-8443.key", "mine-1.key"])
    }

    @Test func aDefaultFolderOpenToOthersOrThatIsASymbolicLinkIsRefusedAndNothingIsWritten() throws {
        let pki = try TestPKI()
        let sandbox = try storeWithIdentity(pki)
        let folder = fallbackFolder(sandbox)
        let manager = FileManager.default
        try manager.createDirectory(at: folder, withIntermediateDirectories: true)

        // Made 0777 by someone before the first run.
        try manager.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder.path)
        let open = try sandbox.run(["curl-args", "https://127.0.0.1:8443/"] + sandbox.storeArguments)
        #expect(open.status == 77, "\(open.stderr)")
        #expect(open.stderrIsOneErrorLine, "\(open.stderr)")
        #expect(open.stderr.contains(folder.path))
        #expect(open.stdout.isEmpty)
        #expect(try manager.contentsOfDirectory(atPath: folder.path).isEmpty)
        #expect(try sandbox.run(["curl-args", "https://127.0.0.1:8443/", "--clean"] + sandbox.storeArguments).status == 77)

        // A symbolic link to a folder that is closed to others: the key would land elsewhere.
        try manager.removeItem(at: folder)
        let elsewhere = sandbox.root.appendingPathComponent("elsewhere", isDirectory: true)
        try manager.createDirectory(at: elsewhere, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try manager.createSymbolicLink(at: folder, withDestinationURL: elsewhere)
        let linked = try sandbox.run(["curl-args", "https://127.0.0.1:8443/"] + sandbox.storeArguments)
        #expect(linked.status == 77, "\(linked.stderr)")
        #expect(linked.stderrIsOneErrorLine, "\(linked.stderr)")
        #expect(linked.stderr.contains(folder.path))
        #expect(linked.stdout.isEmpty)
        #expect(try manager.contentsOfDirectory(atPath: elsewhere.path).isEmpty)

        // The runtime folder's own subfolder is held to the same rules.
        let runtime = sandbox.root.appendingPathComponent("runtime", isDirectory: true)
        let runtimeFolder = runtime.appendingPathComponent("credstore-curl", isDirectory: true)
        try manager.createDirectory(at: runtimeFolder, withIntermediateDirectories: true)
        try manager.setAttributes([.posixPermissions: 0o777], ofItemAtPath: runtimeFolder.path)
        let openRuntime = try sandbox.run(["curl-args", "https://127.0.0.1:8443/"] + sandbox.storeArguments,
                                          environment: ["XDG_RUNTIME_DIR": runtime.path])
        #expect(openRuntime.status == 77, "\(openRuntime.stderr)")
        #expect(openRuntime.stderrIsOneErrorLine, "\(openRuntime.stderr)")
        #expect(try manager.contentsOfDirectory(atPath: runtimeFolder.path).isEmpty)
    }

    /// A folder closed to others is still swapped by whoever can write its parent: a parent
    /// others can write (without the sticky bit /tmp has) is refused, and nothing is written.
    @Test func aFolderUnderAParentOthersCanWriteIsRefused() throws {
        let pki = try TestPKI()
        let sandbox = try storeWithIdentity(pki)
        let manager = FileManager.default
        let shared = sandbox.root.appendingPathComponent("shared", isDirectory: true)
        let folder = shared.appendingPathComponent("curl", isDirectory: true)
        try manager.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try manager.setAttributes([.posixPermissions: 0o777], ofItemAtPath: shared.path)
        let open = try sandbox.run(["curl-args", "https://127.0.0.1:8443/", "--dir", folder.path] + sandbox.storeArguments)
        #expect(open.status == 77, "\(open.stderr)")
        #expect(open.stderrIsOneErrorLine && open.stderr.contains(shared.path), "\(open.stderr)")
        #expect(open.stdout.isEmpty)
        #expect(try manager.contentsOfDirectory(atPath: folder.path).isEmpty)

        // The default folder under a state folder others can write, the same.
        let state = sandbox.root.appendingPathComponent("state", isDirectory: true)
        try manager.createDirectory(at: state, withIntermediateDirectories: true)
        try manager.setAttributes([.posixPermissions: 0o777], ofItemAtPath: state.path)
        let openState = try sandbox.run(["curl-args", "https://127.0.0.1:8443/"] + sandbox.storeArguments,
                                        environment: ["XDG_STATE_HOME": state.path])
        #expect(openState.status == 77 && openState.stderr.contains(state.path), "\(openState.stderr)")

        // A folder whose name starts with a combining mark: the slash before it is still a slash,
        // and the parent others can write is still found and refused.
        let marked = shared.appendingPathComponent("\u{301}curl", isDirectory: true)
        try manager.createDirectory(at: marked, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let openMarked = try sandbox.run(["curl-args", "https://127.0.0.1:8443/", "--dir", marked.path] + sandbox.storeArguments)
        #expect(openMarked.status == 77 && openMarked.stderr.contains(shared.path), "\(openMarked.stderr)")
        #expect(try manager.contentsOfDirectory(atPath: marked.path).isEmpty)

        // With the sticky bit, others cannot rename what is not theirs: the folder is used.
        try manager.setAttributes([.posixPermissions: 0o1777], ofItemAtPath: shared.path)
        let sticky = try sandbox.run(["curl-args", "https://127.0.0.1:8443/", "--dir", folder.path] + sandbox.storeArguments)
        #expect(sticky.status == 0, "\(sticky.stderr)")
        #expect(try !manager.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func cleanOfOneURLLeavesEveryOtherServersFiles() throws {
        let pki = try TestPKI()
        // `__1` is a host name of its own, not the IPv6 address ::1: their files must differ too.
        let sandbox = try storeWithIdentity(pki, hosts: ["127.0.0.1", "::1", "__1"])
        let folder = sandbox.root.appendingPathComponent("curl", isDirectory: true)
        let urls = ["https://127.0.0.1:8443/", "https://127.0.0.1:9443/", "https://[::1]:8443/", "https://__1:8443/"]
        var keys: [String: URL] = [:]
        for url in urls {
            let printed = try sandbox.run(["curl-args", url, "--dir", folder.path] + sandbox.storeArguments)
            #expect(printed.status == 0, "\(printed.stderr)")
            keys[url] = try path(after: "--key", in: printed.stdout.split(whereSeparator: \.isWhitespace).map(String.init))
        }
        #expect(Set(keys.values).count == urls.count, "each server has files of its own: \(keys)")
        func present(_ url: String) -> Bool {
            guard let key = keys[url] else { return false }
            let certificate = key.deletingPathExtension().appendingPathExtension("crt")
            return FileManager.default.fileExists(atPath: key.path) && FileManager.default.fileExists(atPath: certificate.path)
        }

        func clean(_ url: String) throws {
            let result = try sandbox.run(["curl-args", url, "--dir", folder.path, "--clean"] + sandbox.storeArguments)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        try clean("https://127.0.0.1:8443/")
        #expect(!present("https://127.0.0.1:8443/"))
        #expect(present("https://127.0.0.1:9443/"), "another port's files stay")
        #expect(present("https://[::1]:8443/") && present("https://__1:8443/"), "other hosts' files stay")

        try clean("https://[::1]:8443/")
        #expect(!present("https://[::1]:8443/"))
        #expect(present("https://__1:8443/") && present("https://127.0.0.1:9443/"))
        #expect(try String(contentsOf: try #require(keys["https://__1:8443/"]), encoding: .utf8).contains("PRIVATE KEY"))

        // The last server's files gone, the folder goes with them.
        try clean("https://127.0.0.1:9443/")
        try clean("https://__1:8443/")
        #expect(!FileManager.default.fileExists(atPath: folder.path))
    }
}
