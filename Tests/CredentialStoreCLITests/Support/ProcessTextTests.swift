import CredentialStore
import Foundation
import Testing

/// What the process is given, read as the C library and the kernel read it.
struct ProcessTextTests {
    private let shell = URL(fileURLWithPath: "/bin/sh")

    /// Bytes that are not UTF-8 in a passphrase or a path: Swift reads each as U+FFFD, so any
    /// other such bytes of the same length read the same, and a path names another file. Refused
    /// (64), naming where, never the value; nothing is made.
    @Test func anArgumentOrAVariableOfCredstoresThatIsNotUTF8IsRefused() throws {
        let sandbox = try Sandbox()
        let binary = Sandbox.binary.path
        let passphrase = try sandbox.runProgram(shell, ["-c", #"CREDSTORE_PASSPHRASE="$(printf '\377\376pw')" exec "$0" init --passphrase --store "$1""#,
                                                        binary, sandbox.store.path])
        #expect(passphrase.status == 64 && passphrase.stderr.contains("CREDSTORE_PASSPHRASE"), "\(passphrase.stderr)")
        #expect(passphrase.stderrIsOneErrorLine)
        #expect(!FileManager.default.fileExists(atPath: sandbox.store.path))

        let path = try sandbox.runProgram(shell, ["-c", #"exec "$0" init --store "$1$(printf '\377').db""#,
                                                  binary, sandbox.root.appendingPathComponent("store").path])
        #expect(path.status == 64 && path.stderr.contains("argument 3"), "\(path.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path).allSatisfy { !$0.hasPrefix("store") })

        // Another program's variable may hold any bytes.
        try sandbox.add("https://api.example.com", user: "alice", password: "pw")
        let other = try sandbox.runProgram(shell, ["-c", #"OTHER="$(printf '\377')" exec "$0" get https://api.example.com --store "$1""#,
                                                   binary, sandbox.store.path])
        #expect(other.status == 0 && other.stdout == "pw\n", "\(other.stderr)")
    }

    /// With a variable given twice, the first is the one getenv(3) finds, and so the one a
    /// wrapper that checked it saw: credstore reads that one too.
    @Test func theFirstOfAVariableGivenTwiceIsTheOneRead() throws {
        let first = try Sandbox()
        try first.add("https://first.example.com", user: "alice", password: "pw")
        let second = try Sandbox()
        try second.add("https://second.example.com", user: "bob", password: "pw")
        let script = """
            import ctypes, os, sys
            binary, first, second = sys.argv[1:4]
            def array(items):
                return (ctypes.c_char_p * (len(items) + 1))(*[item.encode() for item in items], None)
            environment = ["CREDSTORE_STORE=" + first, "CREDSTORE_STORE=" + second]
            environment += [name + "=" + value for name, value in os.environ.items() if name != "CREDSTORE_STORE"]
            ctypes.CDLL(None).execve(binary.encode(), array([binary, "list", "--json"]), array(environment))
            sys.exit(127)
            """
        let listed = try first.runProgram(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, Sandbox.binary.path, first.store.path, second.store.path])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(try jsonArray(listed.stdout).map { $0["host"] as? String } == ["first.example.com"], "\(listed.stdout)")
    }

    /// A path whose first element starts with a combining mark starts at the root all the same.
    @Test func aFolderVariableThatStartsWithASlashIsAbsoluteWhateverFollows() {
        #expect("/\u{301}data".isAbsolutePath && !"data/x".isAbsolutePath && !"".isAbsolutePath)
        let url = StoreLocation.standard(environment: ["XDG_DATA_HOME": "/\u{301}data", "HOME": "/home/someone"]).databaseURL
        #expect(url.path == "/\u{301}data/credstore/credentials.db")
    }
}
