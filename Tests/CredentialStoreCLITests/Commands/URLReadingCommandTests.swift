import CredentialStoreCLI
import Foundation
import Testing

/// Every door a URL comes in through reads it as a browser does, or refuses it: a URL that
/// names one host to a browser never files or finds a credential under another.
struct URLReadingCommandTests {
    private func write(_ text: String, _ name: String, in sandbox: Sandbox) throws -> String {
        let file = sandbox.root.appendingPathComponent(name)
        try Data(text.utf8).write(to: file)
        return file.path
    }

    /// Bitwarden, a browser and the WHATWG URL standard read this login as bank.example.com's; a
    /// reading that takes `bank.example.com\` for a user name files the bank's password under
    /// evil.example.com.
    @Test func aBitwardenLoginWithABackslashIsNotFiledUnderTheHostAfterTheAt() throws {
        let sandbox = try Sandbox()
        let file = try write("""
            folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp
            ,,login,Bank,,,0,https://bank.example.com\\@evil.example.com/login,alice,bank-password,
            ,,login,Mail,,,0,https://mail.example.com/,alice,mail-password,

            """, "bitwarden.csv", in: sandbox)
        let imported = try sandbox.run(["import", file, "--from", "bitwarden", "--json"] + sandbox.storeArguments)
        #expect(imported.status == 0, "\(imported.stderr)")
        let entries = try #require(jsonObject(imported.stdout)["entries"] as? [[String: Any]])
        let bank = try #require(entries.first { $0["line"] as? Int == 2 })
        #expect(bank["action"] as? String == "skip")
        #expect((bank["reason"] as? String)?.contains("backslash") == true)

        let got = try sandbox.run(["get", "https://evil.example.com"] + sandbox.storeArguments)
        #expect(got.status == 1)
        #expect(!got.stdout.contains("bank-password"))
        let git = try sandbox.run(["git-credential", "get"] + sandbox.storeArguments,
                                  stdin: "protocol=https\nhost=evil.example.com\n\n")
        #expect(!git.stdout.contains("bank-password"))
        // The rest of the file is imported.
        #expect(try sandbox.run(["get", "https://mail.example.com"] + sandbox.storeArguments).stdout == "mail-password\n")
    }

    /// A browser reads `%65vil` as `evil`; the text shows a host that is not the one it names.
    @Test func aPercentEncodedHostIsRefusedOnTheCommandLine() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://evil.example.com", user: "alice", password: "evil-pw")
        let added = try sandbox.run(["add", "https://%65vil.example.com", "--user", "bob"] + sandbox.storeArguments, stdin: "bob-pw\n")
        #expect(added.status == 65)
        #expect(added.stderrIsOneErrorLine)
        #expect(added.stderr.contains("percent-encoded"))
        let got = try sandbox.run(["get", "https://%65vil.example.com"] + sandbox.storeArguments)
        #expect(got.status == 65)
        #expect(got.stdout.isEmpty)
        #expect(got.stderrIsOneErrorLine)
        #expect(try sandbox.run(["get", "https://evil.example.com", "--user", "bob"] + sandbox.storeArguments).status == 1)
    }

    /// A password in a URL is refused on every command, and its words are nowhere in the output,
    /// not even in a suggested URL.
    @Test func aPasswordInTheURLIsRefusedOnAddAndGetAndNeverEchoed() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://api.example.com", user: "alice", password: "stored-pw")
        for url in ["https://alice:hunter2@api.example.com", "alice:hunter2@api.example.com",
                    "https://alice:hunter2@bank.example.com\\@evil.example.com/"] {
            let added = try sandbox.run(["add", url, "--user", "alice"] + sandbox.storeArguments, stdin: "pw\n")
            let got = try sandbox.run(["get", url] + sandbox.storeArguments)
            for result in [added, got] {
                #expect(result.status == 65, "\(url): \(result.stderr)")
                #expect(result.stderrIsOneErrorLine)
                #expect(!result.stdout.contains("hunter2") && !result.stderr.contains("hunter2"), "\(url): \(result.stderr)")
            }
        }
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).stdout == "stored-pw\n")
    }

    /// A user name before `@` names no space: it is refused rather than dropped unseen.
    @Test func aUserNameInTheURLIsRefusedRatherThanDropped() throws {
        let sandbox = try Sandbox()
        let added = try sandbox.run(["add", "https://alice@api.example.com", "--user", "bob"] + sandbox.storeArguments, stdin: "pw\n")
        #expect(added.status == 65)
        #expect(added.stderrIsOneErrorLine)
        #expect(added.stderr.contains("user name"))
    }

    /// In an import, a URL's password is refused and never shown; a URL's user name alone fills
    /// an empty user column, and the report says so.
    @Test func anImportRefusesAURLsPasswordWithoutEchoingItAndSaysWhereAUserCameFrom() throws {
        let sandbox = try Sandbox()
        let file = try write("name,url,username,password\n"
            + "site,https://alice:hunter2@site.example.com/,alice,site-pw\n"
            + "shop,https://carol@shop.example.com/,,shop-pw\n", "chrome.csv", in: sandbox)
        for json in [true, false] {
            let dryRun = try sandbox.run(["import", file, "--from", "chrome", "--dry-run"] + (json ? ["--json"] : []) + sandbox.storeArguments)
            #expect(!dryRun.stdout.contains("hunter2") && !dryRun.stderr.contains("hunter2"), "\(dryRun.stdout)\(dryRun.stderr)")
        }
        let imported = try sandbox.run(["import", file, "--from", "chrome", "--json"] + sandbox.storeArguments)
        #expect(!imported.stdout.contains("hunter2") && !imported.stderr.contains("hunter2"))
        let entries = try #require(jsonObject(imported.stdout)["entries"] as? [[String: Any]])
        let site = try #require(entries.first { $0["line"] as? Int == 2 })
        #expect(site["action"] as? String == "skip")
        #expect((site["reason"] as? String)?.contains("password") == true)
        let shop = try #require(entries.first { $0["line"] as? Int == 3 })
        #expect(shop["action"] as? String == "add")
        #expect((shop["reason"] as? String)?.contains("from the URL") == true)
        #expect(try sandbox.run(["get", "https://site.example.com"] + sandbox.storeArguments).status == 1)
        #expect(try sandbox.run(["get", "https://shop.example.com", "--user", "carol"] + sandbox.storeArguments).stdout == "shop-pw\n")
    }

    /// A git-credentials line whose host is percent-encoded beyond what git writes is skipped.
    @Test func aGitCredentialsLineWithAnEncodedHostIsSkipped() throws {
        let sandbox = try Sandbox()
        let file = try write("https://alice:pw-evil@%65vil.example.com\nhttps://bob:pw-git@git.example.com%3a8443\n",
                             "git-credentials", in: sandbox)
        let imported = try sandbox.run(["import", file, "--from", "git-credentials", "--json"] + sandbox.storeArguments)
        #expect(imported.status == 0, "\(imported.stderr)")
        let report = try jsonObject(imported.stdout)
        #expect(report["added"] as? Int == 1)
        #expect(report["skipped"] as? Int == 1)
        #expect(try sandbox.run(["get", "https://evil.example.com"] + sandbox.storeArguments).status == 1)
        #expect(try sandbox.run(["get", "https://git.example.com:8443"] + sandbox.storeArguments).stdout == "pw-git\n")
    }

    /// curl-args names the files for a host: the host curl reaches must be the host they are for.
    @Test func curlArgsRefusesAURLWithABackslash() throws {
        let sandbox = try Sandbox()
        let result = try sandbox.run(["curl-args", "--dir", sandbox.root.appendingPathComponent("curl").path,
                                     "https://bank.example.com\\@evil.example.com/"] + sandbox.storeArguments)
        #expect(result.status == 65)
        #expect(result.stderrIsOneErrorLine)
        #expect(result.stderr.contains("backslash"))
    }

    /// `pin` names a server as HOST[:PORT], read by the same host rules; a login typed in front
    /// of it is never repeated.
    @Test func aPinTargetIsReadByTheSameHostRulesAndNeverEchoesALogin() throws {
        let sandbox = try Sandbox()
        for server in ["alice:hunter2@api.example.com", "0x7f.1", "%65vil.example.com"] {
            let removed = try sandbox.run(["pin", "remove", server] + sandbox.storeArguments)
            #expect(removed.status == 65, "\(server): \(removed.stderr)")
            #expect(removed.stderrIsOneErrorLine)
            #expect(!removed.stderr.contains("hunter2") && !removed.stdout.contains("hunter2"), "\(removed.stderr)")
        }
    }

    /// A netrc machine in an old IPv4 spelling is a host curl reads as another address.
    @Test func aNetrcMachineInAnOldIPv4SpellingIsSkipped() throws {
        let sandbox = try Sandbox()
        let file = try write("machine 0x7f.1 login alice password pw-a\nmachine api.example.com login bob password pw-b\n",
                             "netrc", in: sandbox)
        let imported = try sandbox.run(["netrc", "import", file] + sandbox.storeArguments)
        #expect(imported.status == 65)
        #expect(imported.stderr.contains("0x7f.1"))
        #expect(try sandbox.run(["get", "https://0x7f.1"] + sandbox.storeArguments).status == 65)
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).stdout == "pw-b\n")
    }
}
