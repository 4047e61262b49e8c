import CredentialStore
import CredentialStoreCLI
import CredentialStoreTestSupport
import Foundation
import Testing
import CredentialStoreFormats
#if canImport(Glibc)
import Glibc
#endif

/// `credstore netrc import|export`: credentials for curl and the tools that read netrc.
struct NetrcCommandTests {
    private let sample = """
        # a comment
        machine api.example.com login alice password "pass word\\"q"
        machine api.example.com
            login bob
            password second
        macdef init
        cd /pub
        get file

        default login anonymous password guest
        machine ftp.example.com login carol account x password "c\\\\d"
        machine nopassword.example.com login dave

        """

    @Test func importStoresEachMachineAndTheFirstIsTheDefault() throws {
        let sandbox = try Sandbox()
        let file = sandbox.root.appendingPathComponent("netrc")
        try sample.write(to: file, atomically: true, encoding: .utf8)
        let imported = try sandbox.run(["netrc", "import", file.path, "--json"] + sandbox.storeArguments)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try jsonObject(imported.stdout)["imported"] as? Int == 3)
        #expect(try jsonObject(imported.stdout)["skipped"] as? Int == 2)
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).stdout == "pass word\"q\n")
        #expect(try sandbox.run(["get", "https://api.example.com", "--user", "bob"] + sandbox.storeArguments).stdout == "second\n")
        #expect(try sandbox.run(["get", "https://ftp.example.com"] + sandbox.storeArguments).stdout == "c\\d\n")
        let listed = try jsonArray(sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout)
        #expect(listed.allSatisfy { $0["persistence"] as? String == "permanent" })
    }

    /// A password with spaces, unquoted, reads as a password and then words that are no
    /// keyword: the file is refused, and the error repeats none of them.
    @Test func anUnquotedPasswordWithSpacesIsRefusedWithoutRepeatingIt() throws {
        let sandbox = try Sandbox()
        let file = sandbox.root.appendingPathComponent("netrc")
        try "machine api.example.com login alice password correct horse battery staple\n".write(to: file, atomically: true, encoding: .utf8)
        let imported = try sandbox.run(["netrc", "import", file.path] + sandbox.storeArguments)
        #expect(imported.status == 65 && imported.stderr.contains("line 1:") && imported.stderr.contains("must be quoted"), "\(imported.stderr)")
        for word in ["correct", "horse", "battery", "staple"] { #expect(!imported.stderr.contains(word), "\(imported.stderr)") }
    }

    /// A netrc file is read whole, up to its cap: a longer one is refused without being read
    /// on, and nothing is stored.
    @Test func aNetrcLongerThanItsCapIsRefused() throws {
        let sandbox = try Sandbox()
        let file = sandbox.root.appendingPathComponent("netrc")
        let entry = "machine a.example.com login alice password " + String(repeating: "p", count: 1000) + "\n"
        let text = sample + String(repeating: entry, count: Netrc.maximumFileBytes / entry.utf8.count + 1)
        try text.write(to: file, atomically: true, encoding: .utf8)
        let imported = try sandbox.run(["netrc", "import", file.path] + sandbox.storeArguments)
        #expect(imported.status == 65, "\(imported.stderr)")
        #expect(imported.stderr.contains("longer than \(Netrc.maximumFileBytes >> 20) MiB"), "\(imported.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.store.path))
    }

    /// curl sends a netrc password as Basic: a credential stored for Digest, NTLM or a form is
    /// never written to the file.
    @Test func exportWritesOnlyCredentialsThatMayGoOutAsBasic() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://digest.example.com", user: "d", password: "digest-secret", ["--method", "digest"])
        try sandbox.add("https://ntlm.example.com", user: "n", password: "ntlm-secret", ["--method", "ntlm"])
        try sandbox.add("https://basic.example.com", user: "b", password: "basic-pw", ["--method", "basic"])
        try sandbox.add("https://any.example.com", user: "a", password: "any-pw")
        let file = sandbox.root.appendingPathComponent("netrc")
        #expect(try sandbox.run(["netrc", "export", file.path] + sandbox.storeArguments).status == 0)
        let written = try String(contentsOf: file, encoding: .utf8)
        #expect(written.contains("machine basic.example.com login b password basic-pw"))
        #expect(written.contains("machine any.example.com login a password any-pw"))
        #expect(!written.contains("digest-secret") && !written.contains("ntlm-secret"))
    }

    /// One realm stored under both "any" and Basic: the host's line is the credential `get`
    /// answers without a method (the one stored for any method), whatever the user names.
    @Test func exportPicksTheMethodALookupWithoutOneAsksFirst() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://host.example.com", user: "alice", password: "basic-pw", ["--method", "basic"])
        try sandbox.add("https://host.example.com", user: "zed", password: "any-pw")
        #expect(try sandbox.run(["get", "https://host.example.com"] + sandbox.storeArguments).stdout == "any-pw\n")
        let file = sandbox.root.appendingPathComponent("netrc")
        #expect(try sandbox.run(["netrc", "export", file.path] + sandbox.storeArguments).status == 0)
        let written = try String(contentsOf: file, encoding: .utf8)
        #expect(written.contains("machine host.example.com login zed password any-pw"))
        #expect(!written.contains("basic-pw"))
    }

    @Test func aMissingFileExits74AndAMalformedOne65WithNothingStored() throws {
        let sandbox = try Sandbox()
        let missing = try sandbox.run(["netrc", "import", sandbox.root.appendingPathComponent("absent").path] + sandbox.storeArguments)
        #expect(missing.status == 74)
        #expect(missing.stderrIsOneErrorLine)

        for text in ["machine a.example.com login x password y\nport 22\n", "machine a.example.com login", "login x password y\n"] {
            let file = sandbox.root.appendingPathComponent("bad")
            try text.write(to: file, atomically: true, encoding: .utf8)
            let malformed = try sandbox.run(["netrc", "import", file.path] + sandbox.storeArguments)
            #expect(malformed.status == 65, "\(text)")
            #expect(malformed.stderrIsOneErrorLine)
        }
        #expect(try sandbox.run(["get", "https://a.example.com"] + sandbox.storeArguments).status == 1)
    }

    @Test func theParserReadsQuotesAndMacros() throws {
        let parsed = try Netrc.parse(sample)
        #expect(parsed.machines == [
            Netrc.Machine(host: "api.example.com", login: "alice", password: "pass word\"q"),
            Netrc.Machine(host: "api.example.com", login: "bob", password: "second"),
            Netrc.Machine(host: "ftp.example.com", login: "carol", password: "c\\d"),
        ])
        #expect(parsed.skipped.count == 2)
        let awkward = ["plain", "with space", "quote\"d", "back\\slash", "#hash", "tab\there", ""]
        let machines = awkward.enumerated().map { Netrc.Machine(host: "h\($0.offset).example.com", login: "u", password: $0.element) }
        #expect(try Netrc.parse(Netrc.render(machines)).machines == machines)
    }

    /// Swift reads "\r\n" as one Character, which made a `#` comment swallow
    /// the rest of a CRLF file while the import reported success.
    @Test func aCRLFFileIsReadWholeAndItsCommentsEndAtTheirLine() throws {
        let sandbox = try Sandbox()
        let file = sandbox.root.appendingPathComponent("netrc")
        let text = "# written on Windows\r\nmachine a.example.com login x password y\r\n# another comment\r\nmachine b.example.com\r\n  login u\r\n  password \"v w\"\r\n"
        try Data(text.utf8).write(to: file)
        let imported = try sandbox.run(["netrc", "import", file.path, "--json"] + sandbox.storeArguments)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try jsonObject(imported.stdout)["imported"] as? Int == 2)
        #expect(try sandbox.run(["get", "https://a.example.com"] + sandbox.storeArguments).stdout == "y\n", "no CR kept in the value")
        #expect(try sandbox.run(["get", "https://b.example.com"] + sandbox.storeArguments).stdout == "v w\n")
        // The parser itself, on the same text and on a `macdef` whose blank line is a bare CR.
        #expect(try Netrc.parse(text).machines.count == 2)
        let macro = "macdef init\r\ncd /pub\r\n\r\nmachine c.example.com login l password p\r\n"
        #expect(try Netrc.parse(macro).machines == [Netrc.Machine(host: "c.example.com", login: "l", password: "p")])
    }

    /// An entry with a second login or password: curl sends the first of each, and the import
    /// stores what curl would send.
    @Test func aRepeatedLoginOrPasswordIsReadAsCurlReadsIt() throws {
        #expect(try Netrc.parse("machine h.example.com login alice password pa login bob\n").machines
                == [Netrc.Machine(host: "h.example.com", login: "alice", password: "pa")])
        #expect(try Netrc.parse("machine h.example.com login alice password pa password pb\n").machines
                == [Netrc.Machine(host: "h.example.com", login: "alice", password: "pa")])
    }

    /// Every entry left out is named on stderr with its line and reason, never with a password;
    /// the valid entries are imported, and an entry refused as invalid makes the status 65.
    @Test func everySkippedEntryIsNamedWithItsReason() throws {
        let sandbox = try Sandbox()
        let file = sandbox.root.appendingPathComponent("netrc")
        let text = """
            default login anonymous password secret-1
            machine nopassword.example.com login dave
            machine "evil host/x" login eve password secret-2
            machine example.com:99999 login eve password secret-3
            machine ok.example.com login alice password fine
            machine nul.example.com login "a\u{0}b" password "secret-4\\r"

            """
        try text.write(to: file, atomically: true, encoding: .utf8)
        let imported = try sandbox.run(["netrc", "import", file.path, "--json"] + sandbox.storeArguments)
        #expect(imported.status == 65, "\(imported.stderr)")
        let notes = imported.stderr.split(separator: "\n")
        #expect(notes.count == 6, "five notes and the error line: \(imported.stderr)")
        for (line, reason) in [(1, "`default`"), (2, "no password"), (3, "host"), (4, "host"), (6, "line break")] {
            #expect(notes.contains { $0.contains("line \(line): skipped") && $0.contains(reason) }, "line \(line): \(imported.stderr)")
        }
        #expect(!imported.stderr.contains("secret-"), "no password in a note")
        let json = try jsonObject(imported.stdout)
        #expect(json["imported"] as? Int == 1)
        #expect(json["skipped"] as? Int == 5)
        #expect(try sandbox.run(["get", "https://ok.example.com"] + sandbox.storeArguments).stdout == "fine\n")
        #expect(try jsonArray(sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout).count == 1)
    }

    @Test func anUnterminatedQuoteIsMalformed() throws {
        #expect(throws: FormatError.self) { try Netrc.parse("machine a.example.com login x password \"open\nmachine b login y password z\n") }
    }

    /// The atomic rename replaces whatever is at the path: a FIFO (or, for root, /dev/null) must
    /// not become a file of passwords. The same holds for a bundle's `export`.
    @Test func exportsRefuseATargetThatIsNotARegularFile() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://a.example.com", user: "u", password: "fifo-secret", ["--persistence", "synchronizable"])
        let fifo = sandbox.root.appendingPathComponent("pipe").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let netrc = try sandbox.run(["netrc", "export", fifo] + sandbox.storeArguments)
        #expect(netrc.status == 74)
        #expect(netrc.stderr.contains("not a regular file"))
        let bundle = try sandbox.run(["export", fifo] + sandbox.storeArguments, environment: ["CREDSTORE_BUNDLE_PASSPHRASE": "bundle pass"])
        #expect(bundle.status != 0)
        // Not replaced by a regular file (FileManager, not stat(2): see Sandbox.mode(of:)).
        let type = try FileManager.default.attributesOfItem(atPath: fifo)[.type] as? FileAttributeType
        #expect(type != nil && type != .typeRegular, "the FIFO is still a FIFO: \(String(describing: type))")
    }

    @Test func exportWritesOneDefaultPerHostAs0600() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "a b\"c")
        try sandbox.add("https://api.example.com", user: "bob", password: "bob-pw")
        try sandbox.add("https://api.example.com", user: "realmed", password: "r", ["--realm", "R"])
        try sandbox.add("http://plain.example.com:8080", user: "carol", password: "c")
        try sandbox.add("ftp://files.example.com", user: "ftp", password: "f")
        try sandbox.add("http://proxy.example.com:3128", user: "proxy", password: "p", ["--proxy", "http"])

        let file = sandbox.root.appendingPathComponent("exported.netrc")
        try "old".write(to: file, atomically: true, encoding: .utf8)
        let exported = try sandbox.run(["netrc", "export", file.path] + sandbox.storeArguments)
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(exported.stdout == "Wrote 2 machines to \(file.path)\n")
        #expect(sandbox.mode(of: file) == 0o600)
        let parsed = try Netrc.parse(String(contentsOf: file, encoding: .utf8))
        #expect(parsed.machines == [
            Netrc.Machine(host: "api.example.com", login: "alice", password: "a b\"c",
                          space: ProtectionSpace(host: "api.example.com", port: 0, protocol: "https", realm: nil)),
            Netrc.Machine(host: "plain.example.com", login: "carol", password: "c",
                          space: ProtectionSpace(host: "plain.example.com", port: 8080, protocol: "http", realm: nil)),
        ])
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path).filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.isEmpty)

        // A link is refused and left as it is.
        let link = sandbox.root.appendingPathComponent("link.netrc")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: sandbox.root.appendingPathComponent("target"))
        let refused = try sandbox.run(["netrc", "export", link.path] + sandbox.storeArguments)
        #expect(refused.status == 74)
        #expect(refused.stderrIsOneErrorLine)
        #expect(!FileManager.default.fileExists(atPath: sandbox.root.appendingPathComponent("target").path))
    }

    /// `get` refuses to guess between realms; netrc, one login per host, has to
    /// choose, and says which it wrote and which it left out (never a password).
    @Test func exportSaysWhichRealmsUserItWroteAndWhichItLeftOut() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://intranet.example.com", user: "alice", password: "alice-secret", ["--realm", "Staff"])
        try sandbox.add("https://intranet.example.com", user: "guest", password: "guest-secret", ["--realm", "Guests"])
        // The same login in two realms: nothing is lost, nothing to say.
        try sandbox.add("https://same.example.com", user: "bob", password: "bob-secret", ["--realm", "A"])
        try sandbox.add("https://same.example.com", user: "bob", password: "bob-secret", ["--realm", "B"])
        #expect(try sandbox.run(["get", "https://intranet.example.com"] + sandbox.storeArguments).status == 65)

        let file = sandbox.root.appendingPathComponent("exported.netrc")
        let exported = try sandbox.run(["netrc", "export", file.path] + sandbox.storeArguments)
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(exported.stderr == """
            credstore: intranet.example.com has defaults in several spaces and a netrc file holds one login per host: \
            wrote guest (https://intranet.example.com:443 realm "Guests"), left out alice (https://intranet.example.com:443 realm "Staff")

            """)
        #expect(!exported.stderr.contains("secret"))
        #expect(try Netrc.parse(String(contentsOf: file, encoding: .utf8)).machines == [
            Netrc.Machine(host: "intranet.example.com", login: "guest", password: "guest-secret",
                          space: ProtectionSpace(host: "intranet.example.com", port: 0, protocol: "https", realm: "Guests")),
            Netrc.Machine(host: "same.example.com", login: "bob", password: "bob-secret",
                          space: ProtectionSpace(host: "same.example.com", port: 0, protocol: "https", realm: "A")),
        ])
    }

    /// curl matches an entry by host and skips the `# credstore:` line above it, which names the
    /// server's own port here.
    @Test func curlReadsTheExportedFile() throws {
        let (curl, python) = ("/usr/bin/curl", "/usr/bin/python3")
        // .ci/setup installs both; a missing tool is a failed test, not a silent pass.
        try #require(FileManager.default.isExecutableFile(atPath: curl), "curl is not installed: run .ci/setup")
        try #require(FileManager.default.isExecutableFile(atPath: python), "python3 is not installed: run .ci/setup")
        let sandbox = try Sandbox()
        let password = "pa ss\"wo\\rd"
        let server = try LocalTestServer.basicAuth(user: "alice", password: password)
        defer { server.stop() }
        let port = server.port
        try sandbox.add("http://127.0.0.1:\(port)", user: "alice", password: password)

        let file = sandbox.root.appendingPathComponent("netrc")
        #expect(try sandbox.run(["netrc", "export", file.path] + sandbox.storeArguments).status == 0)
        #expect(try String(contentsOf: file, encoding: .utf8).hasPrefix("# credstore: http://127.0.0.1:\(port)\nmachine 127.0.0.1 login alice "))
        let url = "http://127.0.0.1:\(port)/"
        let authorized = try runProgram(curl, ["--netrc-file", file.path, "-s", "-o", "/dev/null", "-w", "%{http_code}", url], in: sandbox)
        #expect(authorized.stdout == "200", "\(authorized.stderr)")
        let anonymous = try runProgram(curl, ["-s", "-o", "/dev/null", "-w", "%{http_code}", url], in: sandbox)
        #expect(anonymous.stdout == "401")
    }
}
