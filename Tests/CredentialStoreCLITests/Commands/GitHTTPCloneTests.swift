import CredentialStoreTestSupport
import Foundation
import Testing

/// A real lighttpd serving a bare repository over git's smart HTTP protocol (git-http-backend as a
/// CGI), behind Basic auth (realm "git-realm", user alice, password "right"). Run in the
/// foreground on 127.0.0.1 and killed with SIGKILL.
private final class GitHTTPServer {
    static let backend = "/usr/lib/git-core/git-http-backend"
    static var isAvailable: Bool {
        Lighttpd.isInstalled && FileManager.default.isExecutableFile(atPath: backend)
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/git")
    }

    private let daemon: LocalDaemon
    var port: Int { daemon.port }
    var repositoryURL: String { "http://127.0.0.1:\(port)/git/repo.git" }
    var origin: String { "http://127.0.0.1:\(port)" }

    /// Creates `repos/repo.git` in the sandbox with one commit (README "hello"), then starts lighttpd.
    init(in sandbox: Sandbox) throws {
        let directory = sandbox.root.appendingPathComponent("lighttpd", isDirectory: true)
        let repositories = directory.appendingPathComponent("repos", isDirectory: true)
        let work = directory.appendingPathComponent("work", isDirectory: true)
        let root = directory.appendingPathComponent("root", isDirectory: true)
        for folder in [repositories, work, root] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        let bare = repositories.appendingPathComponent("repo.git").path
        try Self.git(["-c", "init.defaultBranch=main", "init", "-q", "--bare", bare], in: sandbox)
        try Self.git(["-c", "init.defaultBranch=main", "init", "-q", work.path], in: sandbox)
        try Data("hello\n".utf8).write(to: work.appendingPathComponent("README"))
        try Self.git(["-C", work.path, "add", "README"], in: sandbox)
        try Self.git(["-C", work.path, "-c", "user.name=Test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "init"], in: sandbox)
        try Self.git(["-C", work.path, "push", "-q", bare, "HEAD:refs/heads/main"], in: sandbox)

        let htpasswd = try Lighttpd.writePasswordFiles(in: directory, user: "alice", password: "right", digestRealm: "git-realm").htpasswd
        daemon = try Lighttpd.start(
            in: directory, root: root, modules: ["mod_auth", "mod_authn_file", "mod_alias", "mod_setenv", "mod_cgi"], rules: """
            alias.url = ( "/git/" => "\(Self.backend)/" )
            $HTTP["url"] =~ "^/git/" {
              cgi.assign = ( "" => "" )
              setenv.set-environment = ( "GIT_PROJECT_ROOT" => "\(repositories.path)", "GIT_HTTP_EXPORT_ALL" => "1" )
              auth.backend = "htpasswd"
              auth.backend.htpasswd.userfile = "\(htpasswd.path)"
              auth.require = ( "/git/" => ("method" => "basic", "realm" => "git-realm", "require" => "valid-user") )
            }
            """)
    }

    func stop() { daemon.stop() }

    private static func git(_ arguments: [String], in sandbox: Sandbox) throws {
        let result = try runProgram("/usr/bin/git", arguments, in: sandbox, environment: ["GIT_CONFIG_NOSYSTEM": "1"])
        #expect(result.status == 0, "git \(arguments) failed: \(result.stderr)")
    }
}

/// Real git cloning over HTTP from a real server, with credstore as its only credential helper
/// and no prompt.
@Suite(.enabled(if: GitHTTPServer.isAvailable, "needs lighttpd and git (run .ci/setup)"))
struct GitHTTPCloneTests {
    private func clone(_ server: GitHTTPServer, into name: String, in sandbox: Sandbox) throws -> RunResult {
        // git appends the action to the helper string, after the options.
        let helper = "\(Sandbox.binary.path) git-credential --store \(sandbox.store.path)"
        let environment = ["GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "GIT_ASKPASS": "", "SSH_ASKPASS": ""]
        return try runProgram("/usr/bin/git", ["-c", "credential.helper=", "-c", "credential.helper=\(helper)",
                                               "clone", "-q", server.repositoryURL, sandbox.root.appendingPathComponent(name).path],
                              in: sandbox, environment: environment)
    }

    @Test func cloneSucceedsWithTheStoredCredential() throws {
        let sandbox = try Sandbox()
        let server = try GitHTTPServer(in: sandbox)
        defer { server.stop() }
        try sandbox.add(server.origin, user: "alice", password: "right", ["--realm", "git-realm"])

        let result = try clone(server, into: "clone", in: sandbox)
        #expect(result.status == 0, "clone failed: \(result.stderr)")
        let readme = sandbox.root.appendingPathComponent("clone/README")
        #expect(String(decoding: (try? Data(contentsOf: readme)) ?? Data(), as: UTF8.self) == "hello\n")
    }

    @Test func cloneFromAnUnlockedPassphraseStoreNeedsNoPromptAndNoPassphraseInTheEnvironment() throws {
        let sandbox = try Sandbox()
        #expect(sandbox.environment["CREDSTORE_PASSPHRASE"] == nil)
        let server = try GitHTTPServer(in: sandbox)
        defer { server.stop() }
        let passphrase = ["CREDSTORE_PASSPHRASE": "git passphrase"]
        #expect(try sandbox.run(["init", "--passphrase"] + sandbox.storeArguments, environment: passphrase).status == 0)
        #expect(try sandbox.run(["add", server.origin, "--user", "alice", "--realm", "git-realm"] + sandbox.storeArguments,
                                stdin: "right\n", environment: passphrase).status == 0)
        // Locked, git gets nothing (and may not prompt): the clone fails.
        #expect(try clone(server, into: "locked", in: sandbox).status != 0)

        #expect(try sandbox.run(["unlock", "--timeout", "2m"] + sandbox.storeArguments, environment: passphrase).status == 0)
        defer { _ = try? sandbox.run(["lock"] + sandbox.storeArguments) }
        let result = try clone(server, into: "clone", in: sandbox)
        #expect(result.status == 0, "clone failed: \(result.stderr)")
        let readme = sandbox.root.appendingPathComponent("clone/README")
        #expect(String(decoding: (try? Data(contentsOf: readme)) ?? Data(), as: UTF8.self) == "hello\n")
    }

    @Test func aWrongStoredPasswordFailsTheCloneAndGitErasesIt() throws {
        let sandbox = try Sandbox()
        let server = try GitHTTPServer(in: sandbox)
        defer { server.stop() }
        try sandbox.add(server.origin, user: "alice", password: "wrong", ["--realm", "git-realm"])
        #expect(try sandbox.run(["get", server.origin, "--realm", "git-realm"] + sandbox.storeArguments).stdout == "wrong\n")

        let result = try clone(server, into: "clone", in: sandbox)
        #expect(result.status != 0, "clone should have failed")
        #expect(!FileManager.default.fileExists(atPath: sandbox.root.appendingPathComponent("clone/README").path))
        // git ran `credential reject` on the 401, and the helper erased the refused credential.
        let after = try sandbox.run(["get", server.origin, "--realm", "git-realm"] + sandbox.storeArguments)
        #expect(after.status == 1, "the wrong password is still stored: \(after.stdout)")
    }
}
