import CredentialStore
import CredentialStoreCLI
import Foundation
import Testing
import CredentialStoreFormats

/// `netrc export` then `netrc import`: netrc names a host only, so the space of each entry (scheme,
/// port, realm, method) travels in the `# credstore:` comment line above it, and a plain file's
/// entries go where `--scheme` and `--port` say.
struct NetrcRoundTripCommandTests {
    /// Every kind of space a netrc file can carry: http with a port, https on its own port and on
    /// another, a realm with quotes in it, a credential for Basic only.
    private static let credentials: [(url: String, user: String, password: String, more: [String])] = [
        ("http://127.0.0.1:8080", "alice", "loopback-pw", []),
        ("https://api.example.com", "bob", "api-pw", []),
        ("https://git.example.com:8443", "carol", "git \"pw\"", []),
        ("https://intranet.example.com", "dan", "intranet-pw", ["--realm", "Staff \"HQ\""]),
        ("http://basic.example.com", "erin", "basic-pw", ["--method", "basic"]),
    ]

    private func filledSandbox() throws -> Sandbox {
        let sandbox = try Sandbox()
        for entry in Self.credentials {
            try sandbox.add(entry.url, user: entry.user, password: entry.password, entry.more)
        }
        return sandbox
    }

    private func export(_ sandbox: Sandbox) throws -> URL {
        let file = sandbox.root.appendingPathComponent("exported.netrc")
        let exported = try sandbox.run(["netrc", "export", file.path] + sandbox.storeArguments)
        #expect(exported.status == 0, "\(exported.stderr)")
        return file
    }

    /// Each credential's space, user and default mark, as `list --json` gives them.
    private func spaces(_ sandbox: Sandbox, store: [String]? = nil) throws -> [String] {
        let listed = try sandbox.run(["list", "--json"] + (store ?? sandbox.storeArguments))
        #expect(listed.status == 0, "\(listed.stderr)")
        return try jsonArray(listed.stdout).map { entry in
            ["protocol", "host", "port", "realm", "method", "user", "isDefault"]
                .map { key in "\(key)=\(entry[key].map { $0 is NSNull ? "nil" : "\($0)" } ?? "nil")" }.joined(separator: " ")
        }.sorted()
    }

    @Test func anExportedFileImportedIntoTheSameStoreChangesNothing() throws {
        let sandbox = try filledSandbox()
        let file = try export(sandbox)
        let before = try sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout

        let imported = try sandbox.run(["netrc", "import", file.path, "--json"] + sandbox.storeArguments)
        #expect(imported.status == 0, "\(imported.stderr)")
        let report = try jsonObject(imported.stdout)
        #expect(report["imported"] as? Int == 0 && report["added"] as? Int == 0 && report["updated"] as? Int == 0, "\(imported.stdout)")
        #expect(report["unchanged"] as? Int == Self.credentials.count, "\(imported.stdout)")
        let again = try sandbox.run(["netrc", "import", file.path] + sandbox.storeArguments)
        #expect(again.stdout == "Imported 0 credentials from \(file.path) (\(Self.credentials.count) unchanged)\n", "\(again.stderr)")

        // Not a credential more, and not even a modification time changed.
        #expect(try sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout == before)
    }

    @Test func anExportedFileImportedIntoAFreshStoreGivesTheSameSpaces() throws {
        let sandbox = try filledSandbox()
        let file = try export(sandbox)
        let fresh = ["--store", sandbox.root.appendingPathComponent("fresh/credentials.db").path]
        let imported = try sandbox.run(["netrc", "import", file.path, "--json"] + fresh)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try jsonObject(imported.stdout)["added"] as? Int == Self.credentials.count, "\(imported.stdout)")

        #expect(try spaces(sandbox, store: fresh) == spaces(sandbox))
        for entry in Self.credentials {
            let got = try sandbox.run(["get", entry.url, "--user", entry.user] + entry.more + fresh)
            #expect(got.stdout == entry.password + "\n", "\(entry.url): \(got.stderr)")
        }
    }

    /// A netrc file written by hand has no comment lines: the options say where its entries go,
    /// and an entry under a comment line goes where the line says whatever the options are.
    @Test func theOptionsPlaceTheEntriesOfAPlainFile() throws {
        let sandbox = try Sandbox()
        let file = sandbox.root.appendingPathComponent("netrc")
        try """
            machine 127.0.0.1 login alice password loopback-pw
            machine api.example.com
                login bob
                password api-pw
            # credstore: https://git.example.com:8443
            machine git.example.com login carol password git-pw

            """.write(to: file, atomically: true, encoding: .utf8)
        let imported = try sandbox.run(["netrc", "import", file.path, "--scheme", "http", "--port", "8080"] + sandbox.storeArguments)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try spaces(sandbox) == [
            "protocol=http host=127.0.0.1 port=8080 realm=nil method=default user=alice isDefault=1",
            "protocol=http host=api.example.com port=8080 realm=nil method=default user=bob isDefault=1",
            "protocol=https host=git.example.com port=8443 realm=nil method=default user=carol isDefault=1",
        ].sorted())
        #expect(try sandbox.run(["get", "http://127.0.0.1:8080"] + sandbox.storeArguments).stdout == "loopback-pw\n")
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).status == 1, "not under https:443")

        // --port alone keeps https; the scheme alone keeps its own port.
        let other = ["--store", sandbox.root.appendingPathComponent("other/credentials.db").path]
        #expect(try sandbox.run(["netrc", "import", file.path, "--port", "8443"] + other).status == 0)
        #expect(try sandbox.run(["get", "https://api.example.com:8443"] + other).stdout == "api-pw\n")
        #expect(try sandbox.run(["netrc", "import", file.path, "--scheme", "http"] + other).status == 0)
        #expect(try sandbox.run(["get", "http://api.example.com"] + other).stdout == "api-pw\n")

        for bad in [["--port", "0"], ["--port", "65536"], ["--scheme", "ftp"]] {
            let refused = try sandbox.run(["netrc", "import", file.path] + bad + sandbox.storeArguments)
            #expect(refused.status == 64 && refused.stderrIsOneErrorLine, "\(bad): \(refused.stderr)")
        }
    }

    /// A comment line that cannot be the entry's space (another host, words credstore does not
    /// write) refuses the entry rather than filing it under a guess; no word of it is repeated.
    @Test func aCommentLineThatIsNotTheEntrysSpaceRefusesTheEntry() throws {
        let sandbox = try Sandbox()
        let file = sandbox.root.appendingPathComponent("netrc")
        try """
            # credstore: http://other.example.com:8080
            machine a.example.com login alice password secret-a
            # credstore: https://b.example.com hunter2
            machine b.example.com login bob password secret-b
            # credstore: ftp://c.example.com
            machine c.example.com login carol password secret-c
            # credstore: https://d.example.com method digest
            machine d.example.com login dora password secret-d
            machine ok.example.com login dan password fine # credstore: http://ok.example.com:1

            """.write(to: file, atomically: true, encoding: .utf8)
        let imported = try sandbox.run(["netrc", "import", file.path, "--json"] + sandbox.storeArguments)
        #expect(imported.status == 65, "\(imported.stderr)")
        let notes = imported.stderr.split(separator: "\n")
        #expect(notes.count == 5, "four notes and the error line: \(imported.stderr)")
        // curl sends a netrc password as Basic, and export writes no other method.
        for (line, reason) in [(2, "names another host (other.example.com)"), (4, "holds words other than"), (6, "ftp"),
                               (8, "names the method digest")] {
            #expect(notes.contains { $0.contains("line \(line): skipped") && $0.contains(reason) }, "line \(line): \(imported.stderr)")
        }
        #expect(!imported.stderr.contains("secret-") && !imported.stderr.contains("hunter2"))
        #expect(try jsonObject(imported.stdout)["imported"] as? Int == 1)
        // A `#` in the middle of a line is no comment line to curl, so it names no space.
        #expect(try sandbox.run(["get", "https://ok.example.com"] + sandbox.storeArguments).stdout == "fine\n")
        #expect(try jsonArray(sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout).count == 1)
    }

    @Test func theParserReadsTheCommentLineThatRenderWrites() throws {
        let machines = [
            Netrc.Machine(host: "127.0.0.1", login: "a", password: "p", space: ProtectionSpace(host: "127.0.0.1", port: 8080, protocol: "http", realm: nil)),
            Netrc.Machine(host: "::1", login: "b", password: "p", space: ProtectionSpace(host: "::1", port: 0, protocol: "https", realm: "R \"q\" \\ x\ny")),
            Netrc.Machine(host: "basic.example.com", login: "c", password: "p",
                          space: ProtectionSpace(host: "basic.example.com", port: 443, protocol: "http", realm: nil, authenticationMethod: .httpBasic)),
            Netrc.Machine(host: "plain.example.com", login: "d", password: "p"),
        ]
        let text = Netrc.render(machines)
        #expect(text.hasPrefix("# credstore: http://127.0.0.1:8080\nmachine 127.0.0.1 login a password p\n"))
        #expect(text.contains("# credstore: https://[::1] realm \"R \\\"q\\\" \\\\ x\\ny\"\n"))
        #expect(text.contains("# credstore: http://basic.example.com:443 method basic\n"))
        #expect(try Netrc.parse(text).machines == machines)
        // CRLF line ends, and the comment followed by an ordinary one and a blank line.
        let crlf = "# credstore: http://h.example.com:81\r\n# a note\r\n\r\nmachine h.example.com login u password p\r\n"
        #expect(try Netrc.parse(crlf).machines.first?.space == ProtectionSpace(host: "h.example.com", port: 81, protocol: "http", realm: nil))
    }
}
