import CredentialStore
import CredentialStoreCLI
import CredentialStoreTestSupport
import Foundation
import Testing
import CredentialStoreFormats
#if canImport(Glibc)
import Glibc
#endif

/// `credstore import FILE --from FORMAT`: a user's credentials brought over from git-credential-store,
/// KeePassXC, Bitwarden and Chrome, on files in each one's own format.
struct ForeignImportTests {
    /// Writes `text` to a file in the sandbox and returns its path.
    private func write(_ text: String, _ name: String, in sandbox: Sandbox) throws -> String {
        let file = sandbox.root.appendingPathComponent(name)
        try Data(text.utf8).write(to: file)
        return file.path
    }

    private func get(_ url: String, user: String? = nil, _ more: [String] = [], in sandbox: Sandbox) throws -> RunResult {
        try sandbox.run(["get", url] + (user.map { ["--user", $0] } ?? []) + more + sandbox.storeArguments)
    }

    private func entries(_ output: String) throws -> [[String: Any]] {
        try #require(jsonObject(output)["entries"] as? [[String: Any]])
    }

    // MARK: git-credential-store

    /// The file is written by git itself: `git credential-store --file F store`, fed the protocol's
    /// lines as git feeds them after a successful authentication.
    @Test func aFileWrittenByGitCredentialStoreImportsWhereTheGitHelperFindsIt() throws {
        let sandbox = try Sandbox()
        let file = sandbox.root.appendingPathComponent("git-credentials").path
        func store(_ lines: [String]) throws {
            let result = try runProgram("/usr/bin/git", ["credential-store", "--file", file, "store"],
                                        stdin: lines.map { $0 + "\n" }.joined() + "\n", in: sandbox)
            #expect(result.status == 0, "git credential-store failed: \(result.stderr)")
        }
        // Characters git must percent-encode: @ : / % space, and non-ASCII.
        try store(["protocol=https", "host=git.example.com", "username=al ice@corp", "password=p@ss:w/rd%20ü ,\""])
        // A port, and a path (git sends one when credential.useHttpPath is set).
        try store(["protocol=https", "host=git.example.com:8443", "path=team/repo.git", "username=bob", "password=s3cret"])
        try store(["protocol=http", "host=plain.example.com", "username=dave", "password=pw"])
        try store(["protocol=smtp", "host=mail.example.com", "username=carol", "password=x"])
        let written = try String(contentsOfFile: file, encoding: .utf8)
        #expect(written.contains("%40corp"), "git encodes the user name: \(written)")

        let imported = try sandbox.run(["import", file, "--from", "git-credentials", "--json"] + sandbox.storeArguments)
        #expect(imported.status == 0, "\(imported.stderr)")
        let report = try jsonObject(imported.stdout)
        #expect(report["added"] as? Int == 3)
        #expect(report["skipped"] as? Int == 1)
        let skipped = try entries(imported.stdout).filter { $0["action"] as? String == "skip" }
        #expect(skipped.map { $0["user"] as? String } == ["carol"])
        #expect((skipped.first?["reason"] as? String)?.contains("smtp") == true)

        #expect(try get("https://git.example.com", in: sandbox).stdout == "p@ss:w/rd%20ü ,\"\n")
        #expect(try get("http://plain.example.com", in: sandbox).stdout == "pw\n")
        #expect(try get("https://git.example.com:8443", user: "bob", ["--realm", "git:team/repo.git"], in: sandbox).stdout == "s3cret\n")
        // What git asks the helper with useHttpPath finds the credential the file held for that path.
        let answer = try sandbox.run(["git-credential", "get"] + sandbox.storeArguments,
                                     stdin: "protocol=https\nhost=git.example.com:8443\npath=team/repo.git\n\n")
        #expect(answer.stdout == "username=bob\npassword=s3cret\n")
        let listed = try jsonArray(sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout)
        #expect(listed.count == 3 && listed.allSatisfy { $0["persistence"] as? String == "permanent" })
    }

    @Test func aGitCredentialsLineThatIsNotAURLWritesNothing() throws {
        let sandbox = try Sandbox()
        let file = try write("https://a:b@one.example.com\nnot a url\n", "git-credentials", in: sandbox)
        let result = try sandbox.run(["import", file, "--from", "git-credentials"] + sandbox.storeArguments)
        #expect(result.status == 65)
        #expect(result.stderrIsOneErrorLine)
        #expect(result.stderr.contains("line 2"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.store.path), "a malformed file creates no store")
    }

    /// git reads a git-credentials line by bytes, and its host ends at the first `/`: a `/`
    /// followed by a combining mark still ends it, so the `@` after it is in the path, and the
    /// line has no user or password. Read by Characters, it was a password for evil.example.com.
    @Test func aGitCredentialsLineIsSplitWhereGitSplitsItWhateverFollowsTheSlash() throws {
        let sandbox = try Sandbox()
        let file = try write("https://u:p@one.example.com\nhttps://good.example.com/\u{301}mallory:planted@evil.example.com\n",
                             "git-credentials", in: sandbox)
        let result = try sandbox.run(["import", file, "--from", "git-credentials", "--json"] + sandbox.storeArguments)
        #expect(result.status == 0, "\(result.stderr)")
        let listed = try jsonArray(sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout)
        #expect(listed.map { $0["host"] as? String } == ["one.example.com"], "\(listed)")
        #expect(!result.stdout.contains("planted") && !result.stderr.contains("planted"))
    }

    // MARK: CSV exports

    /// KeePassXC quotes every field and writes its columns in this order (2.7 adds TOTP, Icon,
    /// Last Modified and Created after Notes).
    private let keepassxc = """
        "Group","Title","Username","Password","URL","Notes","TOTP","Icon","Last Modified","Created"
        "Root","GitHub","alice","gh, ""quoted"" pass","https://github.com/login","line one
        line two, with a comma","","0","2025-01-02T10:00:00Z","2025-01-01T10:00:00Z"
        "Root/Work","Intranet","bøb","ünï©ødé ✓","https://intranet.example.com:8443/","","","0","",""
        "Root","No URL","carol","pw","","","","0","",""
        "Root","Bare host","dave","pw","example.org","","","0","",""
        "Root","FTP","erin","pw","ftp://files.example.com","","","0","",""
        "Root","Empty password","frank","","https://empty.example.com","","","0","",""
        "Root","GitHub again","alice","gh, ""quoted"" pass","https://github.com/settings","","","0","",""
        "Root","GitHub other","alice","other-pw-9","https://github.com","","","0","",""

        """

    @Test func aKeePassXCExportImportsItsWebLoginsAndNamesEverySkip() throws {
        let sandbox = try Sandbox()
        let file = try write(keepassxc, "keepassxc.csv", in: sandbox)
        let imported = try sandbox.run(["import", file, "--from", "keepassxc", "--json"] + sandbox.storeArguments)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try jsonObject(imported.stdout)["added"] as? Int == 2)
        let rows = try entries(imported.stdout)
        // The note's line break makes the Intranet row start on line 4.
        #expect(rows.map { $0["line"] as? Int } == [2, 4, 5, 6, 7, 8, 9, 10])
        #expect(rows.map { $0["action"] as? String } == ["add", "add", "skip", "skip", "skip", "skip", "skip", "skip"])
        let reasons = rows.compactMap { $0["reason"] as? String }
        #expect(reasons[0].contains("no URL"))
        #expect(reasons[1].contains("no scheme"))
        #expect(reasons[2].contains("ftp"))
        #expect(reasons[3].contains("password is empty"))
        #expect(reasons[4].contains("same site and user as line 2") && !reasons[4].contains("another password"))
        #expect(reasons[5].contains("same site and user as line 2") && reasons[5].contains("another password"))
        #expect(rows[0]["name"] as? String == "GitHub")

        #expect(try get("https://github.com", in: sandbox).stdout == "gh, \"quoted\" pass\n")
        #expect(try get("https://intranet.example.com:8443", user: "bøb", in: sandbox).stdout == "ünï©ødé ✓\n")
        #expect(try get("https://empty.example.com", in: sandbox).status == 1)
        // No password of the file is printed.
        for secret in ["gh, \"quoted\" pass", "ünï©ødé ✓", "other-pw-9"] {
            #expect(!imported.stdout.contains(secret) && !imported.stderr.contains(secret))
        }
    }

    /// Bitwarden's individual vault export, as its exporter writes it: quotes only where needed,
    /// several URIs of one login joined by commas in login_uri, and non-login items.
    private let bitwarden = """
        folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp
        Work,1,login,Mail,"Notes with ""quotes"",
        and a second line",custom: value,0,"https://mail.example.com,https://webmail.example.com:444/inbox",alice@example.com,"pa,ss""word",
        ,,note,Secret note,the note text,,0,,,,
        ,,card,Visa,,,0,,,,
        ,,login,App,,,0,androidapp://com.example.app,app-user,pw,
        ,,login,Κωδικός,,,1,https://greek.example.com,χρήστης,συνθηματικό,JBSWY3DPEHPK3PXP

        """

    @Test func aBitwardenExportImportsEachURIOfALoginAndSkipsOtherItems() throws {
        let sandbox = try Sandbox()
        let file = try write(bitwarden, "bitwarden.csv", in: sandbox)
        let imported = try sandbox.run(["import", file, "--from", "bitwarden", "--json"] + sandbox.storeArguments)
        #expect(imported.status == 0, "\(imported.stderr)")
        let report = try jsonObject(imported.stdout)
        #expect(report["added"] as? Int == 3)
        #expect(report["skipped"] as? Int == 3)
        let skipped = try entries(imported.stdout).filter { $0["action"] as? String == "skip" }
        #expect(skipped.map { $0["line"] as? Int } == [4, 5, 6])
        #expect((skipped[0]["reason"] as? String)?.contains("note item, not a login") == true)
        #expect((skipped[1]["reason"] as? String)?.contains("card item") == true)
        #expect((skipped[2]["reason"] as? String)?.contains("androidapp") == true)
        #expect(try get("https://mail.example.com", in: sandbox).stdout == "pa,ss\"word\n")
        #expect(try get("https://webmail.example.com:444", in: sandbox).stdout == "pa,ss\"word\n")
        #expect(try get("https://greek.example.com", user: "χρήστης", in: sandbox).stdout == "συνθηματικό\n")
    }

    /// A comma followed by a combining mark still separates two URIs: read by Characters, the
    /// field below was one URL whose user was `mallory.example.net,\u{301}`, and the forum's
    /// password became the bank's.
    @Test func aBitwardenCommaFollowedByACombiningMarkStillSeparatesTheURIs() throws {
        let sandbox = try Sandbox()
        let file = try write("folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n"
                             + ",,login,forum,,,0,\"https://mallory.example.net,\u{301}@bank.example.com\",alice,forum-pw,\n",
                             "bitwarden.csv", in: sandbox)
        _ = try sandbox.run(["import", file, "--from", "bitwarden"] + sandbox.storeArguments)
        let listed = try jsonArray(sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout)
        #expect(!listed.contains { $0["host"] as? String == "bank.example.com" }, "\(listed)")
        #expect(try get("https://bank.example.com", in: sandbox).stdout.isEmpty)
    }

    /// Chrome's export (chrome://password-manager/settings), as Chromium writes it: CRLF line
    /// ends and the `note` column of recent versions.
    private let chrome = "name,url,username,password,note\r\n"
        + "example.com,https://example.com/,alice,\"comma, pass\",\"two\r\nlines\"\r\n"
        + "localhost,http://localhost:8080/,dev,devpw,\r\n"
        + "com.example.app,android://hash@com.example.app/,app,pw,\r\n"
        + "nouser.example,https://nouser.example/,,pw,\r\n"

    @Test func aChromeExportImportsAndTheCredentialsAnswerWithoutARealm() throws {
        let sandbox = try Sandbox()
        let file = try write(chrome, "Chrome Passwords.csv", in: sandbox)
        let imported = try sandbox.run(["import", file, "--from", "chrome"] + sandbox.storeArguments)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("2 added, 0 updated, 0 unchanged, 2 skipped"), "\(imported.stdout)")
        #expect(imported.stdout.contains("it has no user name"))
        #expect(try get("https://example.com", in: sandbox).stdout == "comma, pass\n")
        #expect(try get("http://localhost:8080", in: sandbox).stdout == "devpw\n")
        let listed = try jsonArray(sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout)
        #expect(listed.allSatisfy { $0["realm"] is NSNull && $0["isDefault"] as? Bool == true })
    }

    @Test func aFileOfTheWrongFormatIsRefusedByItsHeader() throws {
        let sandbox = try Sandbox()
        let file = try write(chrome, "chrome.csv", in: sandbox)
        for format in ["keepassxc", "bitwarden"] {
            let result = try sandbox.run(["import", file, "--from", format] + sandbox.storeArguments)
            #expect(result.status == 65, "\(format)")
            #expect(result.stderrIsOneErrorLine)
            #expect(result.stderr.contains("column"))
        }
        #expect(!FileManager.default.fileExists(atPath: sandbox.store.path))
    }

    // MARK: Nothing written

    @Test func aDryRunReportsAndWritesNothing() throws {
        let sandbox = try Sandbox()
        let file = try write(keepassxc, "keepassxc.csv", in: sandbox)
        // No store yet: the dry run does not create one to find out.
        let first = try sandbox.run(["import", file, "--from", "keepassxc", "--dry-run"] + sandbox.storeArguments)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("would add"))
        #expect(first.stdout.contains("2 added") && first.stdout.contains("dry run: nothing was written"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.store.path))

        try sandbox.add("https://github.com", user: "alice", password: "older")
        let before = try sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout
        let second = try sandbox.run(["import", file, "--from", "keepassxc", "--dry-run", "--overwrite", "--json"] + sandbox.storeArguments)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try jsonObject(second.stdout)["updated"] as? Int == 1)
        #expect(try jsonObject(second.stdout)["dryRun"] as? Bool == true)
        #expect(try jsonObject(second.stdout)["advice"] is NSNull, "the file is still needed after a dry run")
        #expect(try sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout == before)
        #expect(try get("https://github.com", in: sandbox).stdout == "older\n")
    }

    @Test func aMalformedFileWritesNothingEvenWhenItsFirstRowsAreFine() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://kept.example.com", user: "k", password: "kept")
        let before = try sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout
        let good = "name,url,username,password\nok,https://ok.example.com,u,p\n"
        let files: [(String, String)] = [
            (good + "bad,https://bad.example.com,u,\"unterminated\n", "no closing quote"),
            (good + "bad,https://bad.example.com,u\n", "3 fields"),
            (good + "bad,https://bad.example.com,u,p\"q\n", "double quote"),
            (good + "bad,https://bad.example.com,u,\"p\"q\n", "closing quote"),
            ("title,url,username,password\nok,https://ok.example.com,u,p\n", "\"name\" column"),
            ("", "empty"),
        ]
        for (text, expected) in files {
            let file = try write(text, "bad.csv", in: sandbox)
            let result = try sandbox.run(["import", file, "--from", "chrome"] + sandbox.storeArguments)
            #expect(result.status == 65, "\(expected)")
            #expect(result.stderrIsOneErrorLine)
            #expect(result.stderr.contains(expected), "\(result.stderr)")
            #expect(result.stderr.contains("nothing was imported"))
        }
        let notUTF8 = sandbox.root.appendingPathComponent("latin1.csv")
        // "café" in Latin-1, as a spreadsheet might save it.
        try Data(Array("name,url,username,password\nx,https://ok.example.com,u,caf".utf8) + [0xE9, 0x0A]).write(to: notUTF8)
        #expect(try sandbox.run(["import", notUTF8.path, "--from", "chrome"] + sandbox.storeArguments).status == 65)
        let missing = try sandbox.run(["import", sandbox.root.appendingPathComponent("absent.csv").path, "--from", "chrome"] + sandbox.storeArguments)
        #expect(missing.status == 74)
        #expect(try sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout == before)
    }

    // MARK: Conflicts, tiers, advice

    @Test func anExistingDifferentPasswordIsKeptUnlessOverwriteIsGiven() throws {
        let sandbox = try Sandbox()
        try sandbox.add("https://example.com", user: "alice", password: "mine")
        let file = try write(chrome, "chrome.csv", in: sandbox)
        let kept = try sandbox.run(["import", file, "--from", "chrome", "--json"] + sandbox.storeArguments)
        #expect(kept.status == 0, "\(kept.stderr)")
        let row = try #require(try entries(kept.stdout).first { $0["line"] as? Int == 2 })
        #expect(row["action"] as? String == "skip")
        #expect((row["reason"] as? String)?.contains("--overwrite") == true)
        #expect(try get("https://example.com", in: sandbox).stdout == "mine\n")

        let replaced = try sandbox.run(["import", file, "--from", "chrome", "--overwrite", "--json"] + sandbox.storeArguments)
        #expect(try jsonObject(replaced.stdout)["updated"] as? Int == 1)
        #expect(try jsonObject(replaced.stdout)["unchanged"] as? Int == 1, "localhost was imported the first time")
        #expect(try get("https://example.com", in: sandbox).stdout == "comma, pass\n")
    }

    @Test func persistenceSynchronizableIsAFlagAndTheBundleFormGoesWithoutIt() throws {
        let sandbox = try Sandbox()
        let file = try write(chrome, "chrome.csv", in: sandbox)
        let imported = try sandbox.run(["import", file, "--from", "chrome", "--persistence", "synchronizable"] + sandbox.storeArguments)
        #expect(imported.status == 0, "\(imported.stderr)")
        let listed = try jsonArray(sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout)
        #expect(listed.count == 2 && listed.allSatisfy { $0["persistence"] as? String == "synchronizable" })
        for flag in [["--overwrite"], ["--persistence", "permanent"]] {
            let bundle = try sandbox.run(["import", file] + flag + sandbox.storeArguments)
            #expect(bundle.status == 64, "\(flag)")
            #expect(bundle.stderr.contains("--from"))
        }
    }

    @Test func theImportTellsTheUserToDeleteThePlainTextFile() throws {
        let sandbox = try Sandbox()
        let file = try write(chrome, "it's mine.csv", in: sandbox)
        let imported = try sandbox.run(["import", file, "--from", "chrome"] + sandbox.storeArguments)
        #expect(imported.status == 0, "\(imported.stderr)")
        let quoted = "'" + file.replacingOccurrences(of: "'", with: "'\\''") + "'"
        #expect(imported.stdout.contains("shred -u \(quoted)"), "\(imported.stdout)")
        #expect(imported.stdout.contains("plain text"))
        let json = try sandbox.run(["import", file, "--from", "chrome", "--json"] + sandbox.storeArguments)
        #expect((try jsonObject(json.stdout)["advice"] as? String)?.contains("shred -u") == true)

        let gitFile = try write("https://u:p@git.example.com\n", "git-credentials", in: sandbox)
        let git = try sandbox.run(["import", gitFile, "--from", "git-credentials"] + sandbox.storeArguments)
        #expect(git.stdout.contains("credential.helper"), "git would write the file again")
    }

    // MARK: Bounds

    /// Each cap refuses the whole file with the line it is on, before a store is made.
    @Test(arguments: ["a field", "a record", "the fields"])
    func aCSVOverACapIsRefusedWholeNamingTheLine(what: String) throws {
        let (text, message) = switch what {
        case "a field":
            ("name,url,username,password\nx,https://a.example.com,u," + String(repeating: "p", count: CSV.maximumFieldBytes + 1) + "\n",
             "line 2: a field is longer than \(CSV.maximumFieldBytes) bytes")
        case "a record":
            ("name,url,username,password,note\n" + (0..<5).map { _ in "\"" + String(repeating: "n", count: CSV.maximumFieldBytes - 1) + "\"" }.joined(separator: ",") + "\n",
             "line 2: the record is longer than \(CSV.maximumRecordBytes) bytes")
        default:
            ("name,url,username,password" + String(repeating: ",x", count: CSV.maximumFieldCount) + "\n",
             "line 1: the record has more than \(CSV.maximumFieldCount) fields")
        }
        let sandbox = try Sandbox()
        let file = try write(text, "export.csv", in: sandbox)
        let result = try sandbox.run(["import", file, "--from", "chrome"] + sandbox.storeArguments)
        #expect(result.status == 65, "\(what): \(result.stderr)")
        #expect(result.stderr.contains(message) && result.stderr.contains("nothing was imported"), "\(what): \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.store.path), "\(what): a refused file created a store")
    }

    @Test func aGitCredentialsLineOverItsCapIsRefusedWhole() throws {
        let sandbox = try Sandbox()
        let long = "https://u:" + String(repeating: "p", count: ForeignImport.maximumLineBytes) + "@a.example.com\n"
        let file = try write("https://v:q@b.example.com\n" + long, "git-credentials", in: sandbox)
        let result = try sandbox.run(["import", file, "--from", "git-credentials"] + sandbox.storeArguments)
        #expect(result.status == 65 && result.stderr.contains("line 2 is longer than \(ForeignImport.maximumLineBytes) bytes"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.store.path))
    }

    @Test func aFileOfMoreEntriesThanTheCapIsRefusedWhole() throws {
        let sandbox = try Sandbox()
        let lines = (0...ForeignImport.maximumEntries).map { "https://u:p@h\($0).example.com\n" }.joined()
        let file = try write(lines, "git-credentials", in: sandbox)
        let result = try sandbox.run(["import", file, "--from", "git-credentials"] + sandbox.storeArguments)
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("line \(ForeignImport.maximumEntries + 1): the file holds more than \(ForeignImport.maximumEntries) entries"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.store.path))
    }

    @Test func aLoginWithMoreURIsThanTheCapIsSkippedAndSaid() throws {
        let sandbox = try Sandbox()
        let uris = (0...ForeignImport.maximumURIsPerLogin).map { "https://u\($0).example.com" }.joined(separator: ",")
        let file = try write("""
            folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp
            ,,login,many,,,0,"\(uris)",alice,pw-many,
            ,,login,one,,,0,https://one.example.com,bob,pw-one,

            """, "bitwarden.csv", in: sandbox)
        let result = try sandbox.run(["import", file, "--from", "bitwarden", "--json"] + sandbox.storeArguments)
        #expect(result.status == 0, "\(result.stderr)")
        let reported = try entries(result.stdout)
        #expect(reported.count == 2)
        #expect(reported.first?["action"] as? String == "skip")
        #expect((reported.first?["reason"] as? String)?.contains("\(ForeignImport.maximumURIsPerLogin + 1) URIs") == true)
        #expect(try get("https://one.example.com", in: sandbox).stdout == "pw-one\n")
        #expect(try get("https://u0.example.com", in: sandbox).status == 1)
    }

    @Test func anExportPipedInIsImported() throws {
        let sandbox = try Sandbox()
        let result = try sandbox.run(["import", "/dev/stdin", "--from", "git-credentials"] + sandbox.storeArguments,
                                     stdin: "https://u:piped@p.example.com\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try get("https://p.example.com", in: sandbox).stdout == "piped\n")
        // Nothing to delete: no `shred -u /dev/stdin`, which would unlink the link as root.
        #expect(!result.stdout.contains("shred"), "\(result.stdout)")
    }

    /// A FIFO nobody writes to is an empty file, not an import that waits forever to open it.
    @Test func aFIFOWithoutAWriterIsReadAsEmpty() throws {
        let sandbox = try Sandbox()
        let fifo = sandbox.root.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let result = try sandbox.run(["import", fifo, "--from", "chrome"] + sandbox.storeArguments)
        #expect(result.status == 65 && result.stderr.contains("the file is empty"), "\(result.stderr)")
    }

    /// What a reason repeats of the file is a short name, never the file's text: a reason is
    /// kept until the report, and a scheme or an item type can be a megabyte (or a password).
    @Test func aSkipReasonRepeatsNoLongTextOfTheFile() throws {
        let sandbox = try Sandbox()
        let long = String(repeating: "a", count: 100_000)
        let file = try write("""
            name,url,username,password
            x,\(long)://x.example.com,alice,pw
            y,ftp://y.example.com,bob,pw

            """, "export.csv", in: sandbox)
        let result = try sandbox.run(["import", file, "--from", "chrome", "--json"] + sandbox.storeArguments)
        #expect(result.status == 0, "\(result.stderr)")
        let reasons = try entries(result.stdout).compactMap { $0["reason"] as? String }
        #expect(reasons.count == 2 && reasons.allSatisfy { $0.utf8.count < 200 }, "\(reasons.map(\.count))")
        #expect(reasons.last?.contains("scheme is ftp") == true, "a short scheme is still named: \(reasons)")
    }

    @Test func aHeaderThatNamesAColumnTwiceIsRefused() throws {
        let sandbox = try Sandbox()
        let file = try write("name,url,username,password,password\nx,https://x.example.com,alice,one,two\n", "export.csv", in: sandbox)
        let result = try sandbox.run(["import", file, "--from", "chrome"] + sandbox.storeArguments)
        #expect(result.status == 65 && result.stderr.contains("\"password\" column twice"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.store.path))
    }

    @Test func bytesThatAreNotUTF8AreRefusedNamingTheirLine() throws {
        let sandbox = try Sandbox()
        let path = sandbox.root.appendingPathComponent("export.csv")
        try Data(Array("name,url,username,password\nx,https://x.example.com,alice,pw\ny,https://y.example.com,bob,".utf8) + [0xC3, 0x28] + Array("\n".utf8)).write(to: path)
        let result = try sandbox.run(["import", path.path, "--from", "chrome"] + sandbox.storeArguments)
        #expect(result.status == 65 && result.stderr.contains("line 3 of") && result.stderr.contains("not UTF-8"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.store.path))
    }

    /// The import reads the file once to check it, once to write it and again to report: a
    /// file written to in between is refused, rather than imported half old and half new.
    @Test func aFileWrittenToBetweenPassesIsRefused() throws {
        let sandbox = try Sandbox()
        let path = try write("https://u:p@a.example.com\n", "git-credentials", in: sandbox)
        let file = try ImportFile(path: path)
        var first = try file.scalars()
        #expect(try first.nextScalar() == "h")
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("https://v:q@b.example.com\n".utf8))
        try handle.close()
        #expect(throws: CommandFailure.self) { try file.scalars() }
        #expect(throws: CommandFailure.self) { try file.checkUnchanged() }
    }

    /// The same size and the same modification time (restored, or a write through a shared
    /// memory map) still show: each pass's bytes are hashed and must be the first pass's.
    @Test func aChangeThatKeepsSizeAndTimeIsSeenByTheNextPass() throws {
        let sandbox = try Sandbox()
        let path = try write("https://u:pass1@a.example.com\n", "git-credentials", in: sandbox)
        let file = try ImportFile(path: path)
        func readAll() throws {
            var scalars = try file.scalars()
            while try scalars.nextScalar() != nil {}
            try file.endPass()
        }
        try readAll()
        try readAll()
        let modified = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate]
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seek(toOffset: 10)
        try handle.write(contentsOf: Data("EVIL1".utf8))
        try handle.close()
        try FileManager.default.setAttributes([.modificationDate: modified as Any], ofItemAtPath: path)
        #expect(throws: CommandFailure.self) { try readAll() }
    }

    /// The file is read 64 KiB at a time: a character whose bytes straddle two reads is one
    /// character, and bytes that are not UTF-8 anywhere refuse the file.
    @Test func aCharacterAcrossTwoReadsIsReadWhole() throws {
        let sandbox = try Sandbox()
        for offset in 65_533...65_536 {
            let text = String(repeating: "a", count: offset) + "é€😀\n"
            let path = try write(text, "file-\(offset)", in: sandbox)
            var scalars = try ImportFile(path: path).scalars()
            var read = String.UnicodeScalarView()
            while let scalar = try scalars.nextScalar() { read.append(scalar) }
            #expect(String(read) == text, "split at \(offset)")
        }
        var bytes = Array(String(repeating: "a", count: 65_535).utf8)
        bytes += [0xC3]  // the first byte of "é", then the file ends
        let truncated = sandbox.root.appendingPathComponent("truncated")
        try Data(bytes).write(to: truncated)
        var scalars = try ImportFile(path: truncated.path).scalars()
        #expect(throws: FormatError.self) { while try scalars.nextScalar() != nil {} }
    }

    // MARK: The CSV reader

    @Test func theCSVReaderFollowsRFC4180() throws {
        let text = "\u{FEFF}a,b,c\r\n\"x,1\",\"say \"\"hi\"\"\",\"two\nlines\"\n,,\n\n\"\",z,\"\"\nlast,,"
        let records = try CSV.records(text)
        #expect(records == [
            CSV.Record(fields: ["a", "b", "c"], line: 1),
            CSV.Record(fields: ["x,1", "say \"hi\"", "two\nlines"], line: 2),
            CSV.Record(fields: ["", "", ""], line: 4),
            CSV.Record(fields: ["", "z", ""], line: 6),
            CSV.Record(fields: ["last", "", ""], line: 7),
        ])
        #expect(throws: CSV.Malformed(line: 2, reason: "a quoted field has no closing quote")) { try CSV.records("a\n\"open\n,more") }
        #expect(throws: CSV.Malformed.self) { try CSV.records("a,\"b\"c\n") }
        #expect(throws: CSV.Malformed.self) { try CSV.records("a,b\"c\n") }
    }

    @Test func gitCredentialLinesDecodeAsGitEncodes() throws {
        let rows = try ForeignImport.rows("https://a%3Ab:p%25%zz+@h.example.com:8443/x/y.git/\n", format: .gitCredentials)
        #expect(rows.count == 1)
        #expect(rows[0].user == "a:b")
        #expect(rows[0].password == "p%%zz+")
        #expect(rows[0].space?.port == 8443)
        #expect(rows[0].space?.realm == "git:x/y.git")
    }

    /// git trims a path's leading slashes before decoding it and its trailing ones after: an
    /// encoded `%2F` at either end lands where git's own `path=` puts it, so the git helper finds it.
    @Test func anEncodedSlashAtThePathsEndsIsTrimmedAsGitTrimsIt() throws {
        let rows = try ForeignImport.rows("https://u:pw@gc.example.com/%2Fx/y%2F/\n", format: .gitCredentials)
        #expect(rows.map(\.space?.realm) == ["git:/x/y"])
        let sandbox = try Sandbox()
        let file = sandbox.root.appendingPathComponent("git-credentials")
        try Data("https://u:pw@gc.example.com/%2Fx/y%2F/\n".utf8).write(to: file)
        #expect(try sandbox.run(["import", file.path, "--from", "git-credentials"]).status == 0)
        let found = try sandbox.run(["git-credential", "get"], stdin: "protocol=https\nhost=gc.example.com\npath=/x/y\n\n")
        #expect(found.stdout == "username=u\npassword=pw\n")
    }
}
