import CredentialStoreCLI
import Foundation
import Testing
import CredentialStoreFormats

/// Runs another program (git, curl) with `stdin`, in the sandbox's environment plus `extra`.
func runProgram(_ path: String, _ arguments: [String], stdin: String = "", in sandbox: Sandbox,
                environment extra: [String: String] = [:]) throws -> RunResult {
    try sandbox.runProgram(URL(fileURLWithPath: path), arguments, stdin: stdin, environment: extra)
}

/// `credstore git-credential get|store|erase`: git's credential helper protocol.
struct GitCredentialCommandTests {
    /// Sends `lines` (and the blank line that ends them) to `credstore git-credential ACTION`.
    private func helper(_ sandbox: Sandbox, _ action: String, _ lines: [String], _ extra: [String] = []) throws -> RunResult {
        let result = try sandbox.run(["git-credential", action] + extra, stdin: lines.map { $0 + "\n" }.joined() + "\n")
        #expect(result.status == 0, "git-credential \(action) failed: \(result.stderr)")
        return result
    }

    /// `git credential ACTION` (the installed git) with `stdin`, credstore on `sandbox.store` as
    /// its only helper, and no prompt anywhere.
    private func realGit(_ action: String, _ stdin: String, in sandbox: Sandbox) throws -> RunResult {
        // git appends the action to the helper string, after the options.
        let helper = "\(Sandbox.binary.path) git-credential --store \(sandbox.store.path)"
        return try runProgram("/usr/bin/git", ["-c", "credential.helper=", "-c", "credential.helper=\(helper)", "credential", action],
                              stdin: stdin, in: sandbox,
                              environment: ["GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "GIT_ASKPASS": "", "SSH_ASKPASS": ""])
    }

    @Test func storeThenGetThenErase() throws {
        let sandbox = try Sandbox()
        let origin = ["protocol=https", "host=git.example.com"]
        #expect(try helper(sandbox, "get", origin).stdout == "", "nothing stored, nothing printed, no store created")
        #expect(!FileManager.default.fileExists(atPath: sandbox.defaultStore.path))

        _ = try helper(sandbox, "store", origin + ["username=alice", "password=s3cret word", "capability[]=authtype"])
        #expect(try helper(sandbox, "get", origin).stdout == "username=alice\npassword=s3cret word\n")
        // The credential is an ordinary one: `credstore get` sees it too.
        #expect(try sandbox.run(["get", "https://git.example.com"]).stdout == "s3cret word\n")

        // An erase naming another password leaves a newer credential alone.
        _ = try helper(sandbox, "erase", origin + ["username=alice", "password=old"])
        #expect(try helper(sandbox, "get", origin).stdout.contains("password=s3cret word\n"))
        _ = try helper(sandbox, "erase", origin + ["username=alice", "password=s3cret word"])
        #expect(try helper(sandbox, "get", origin).stdout == "")
        // Erasing again is not an error: git ignores it.
        _ = try helper(sandbox, "erase", origin + ["username=alice"])
    }

    /// A request that never ends is refused once it passes its cap, rather than read into memory.
    @Test func aRequestOfEndlessLinesIsRefused() throws {
        let sandbox = try Sandbox()
        let lines = ["protocol=https", "host=git.example.com"] + Array(repeating: "wwwauth[]=Basic realm=x", count: 5_000)
        let result = try sandbox.run(["git-credential", "get"], stdin: lines.map { $0 + "\n" }.joined() + "\n")
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("more than 1000 lines"), "\(result.stderr)")
        // Long lines, fewer than a thousand of them: the same.
        let long = ["protocol=https", "host=git.example.com"] + Array(repeating: "wwwauth[]=" + String(repeating: "b", count: 60_000), count: 20)
        let longResult = try sandbox.run(["git-credential", "get"], stdin: long.map { $0 + "\n" }.joined() + "\n")
        #expect(longResult.status == 65 && longResult.stderr.contains("1024 KiB"), "\(longResult.stderr)")
    }

    /// git sends what it gets as Basic: a credential stored for Digest (or NTLM) never reaches it,
    /// and one realm stored under both password methods is one realm, not an ambiguity.
    @Test func onlyCredentialsThatMayGoOutAsBasicAreAnswered() throws {
        let sandbox = try Sandbox()
        let origin = ["protocol=https", "host=git.example.com"]
        try sandbox.add("https://git.example.com", user: "digest-only", password: "never-as-basic", ["--realm", "R", "--method", "digest"])
        #expect(try helper(sandbox, "get", origin, sandbox.storeArguments).stdout == "")
        try sandbox.add("https://git.example.com", user: "ntlm-only", password: "never-either", ["--realm", "N", "--method", "ntlm"])

        try sandbox.add("https://git.example.com", user: "alice", password: "any-method", ["--realm", "Staff"])
        try sandbox.add("https://git.example.com", user: "bob", password: "basic-only", ["--realm", "Staff", "--method", "basic"])
        #expect(try helper(sandbox, "get", origin, sandbox.storeArguments).stdout == "username=alice\npassword=any-method\n")
        #expect(try helper(sandbox, "get", origin + ["username=bob"], sandbox.storeArguments).stdout == "username=bob\npassword=basic-only\n")
    }

    /// A credential that answers through a compatible method (stored for Basic, asked without a
    /// method) is erased from the space it lives in: git's rejection removes what git was given,
    /// never another credential of the same user in the space git asked about.
    @Test(arguments: [true, false])
    func eraseRemovesTheCredentialGitWasGivenFromItsOwnSpace(namingTheUser: Bool) throws {
        let sandbox = try Sandbox()
        let origin = ["protocol=https", "host=git.example.com"]
        let url = "https://git.example.com"
        try sandbox.add(url, user: "bob", password: "rejected", ["--method", "basic"])
        // The space without a method holds bob too, with another password, and no default.
        for user in ["alice", "bob", "carol"] { try sandbox.add(url, user: user, password: "kept-\(user)") }
        #expect(try sandbox.run(["remove", url, "--user", "alice"] + sandbox.storeArguments).status == 0)
        #expect(try helper(sandbox, "get", origin, sandbox.storeArguments).stdout == "username=bob\npassword=rejected\n")

        // git names the user and the password it was given (`git credential reject` may leave the user out).
        let rejected = (namingTheUser ? ["username=bob"] : []) + ["password=rejected"]
        _ = try helper(sandbox, "erase", origin + rejected, sandbox.storeArguments)
        #expect(try helper(sandbox, "get", origin, sandbox.storeArguments).stdout == "", "the rejected credential is gone")
        #expect(try sandbox.run(["get", url, "--user", "bob"] + sandbox.storeArguments).stdout == "kept-bob\n",
                "bob's other credential, which git never saw, is kept")
    }

    /// Adds `user`'s credential to `url`'s space (with `more` options), expired since 2001, with
    /// `refreshToken` when one is given.
    private func addExpired(_ sandbox: Sandbox, _ url: String, user: String, password: String, refreshToken: String? = nil,
                            _ more: [String] = []) throws {
        let added = try sandbox.run(["add", url, "--user", user, "--expires", "2001-01-01T00:00:00Z"] + more
                                    + (refreshToken == nil ? [] : ["--refresh-token"]) + sandbox.storeArguments,
                                    stdin: password + "\n" + (refreshToken.map { $0 + "\n" } ?? ""))
        #expect(added.status == 0, "\(added.stderr)")
    }

    /// git approves (stores) what a get gave it. When that came from the origin's credential
    /// without a realm, or from the realm's Basic space, no copy is written in the space git
    /// asked about: removing the credential where the user keeps it stops git from getting it.
    @Test func storeOfWhatGetGaveLeavesNoCopyBehind() throws {
        let sandbox = try Sandbox()
        let url = "https://git.example.com"
        let challenged = ["protocol=https", "host=git.example.com", "wwwauth[]=Basic realm=\"Staff\""]
        try sandbox.add(url, user: "bob", password: "pw")
        #expect(try helper(sandbox, "get", challenged, sandbox.storeArguments).stdout == "username=bob\npassword=pw\n")
        _ = try helper(sandbox, "store", challenged + ["username=bob", "password=pw"], sandbox.storeArguments)
        #expect(try sandbox.run(["remove", url, "--user", "bob"] + sandbox.storeArguments).status == 0)
        #expect(try helper(sandbox, "get", challenged, sandbox.storeArguments).stdout == "")

        let origin = ["protocol=https", "host=git.example.com"]
        try sandbox.add(url, user: "carol", password: "basic-pw", ["--method", "basic"])
        #expect(try helper(sandbox, "get", origin, sandbox.storeArguments).stdout == "username=carol\npassword=basic-pw\n")
        _ = try helper(sandbox, "store", origin + ["username=carol", "password=basic-pw", "password_expiry_utc=4102444800"], sandbox.storeArguments)
        // The expiry git sent is kept beside the credential it belongs to.
        #expect(try helper(sandbox, "get", origin, sandbox.storeArguments).stdout.contains("password_expiry_utc=4102444800\n"))
        #expect(try sandbox.run(["remove", url, "--user", "carol", "--method", "basic"] + sandbox.storeArguments).status == 0)
        #expect(try helper(sandbox, "get", origin, sandbox.storeArguments).stdout == "")

        // The one realm on the origin answers a request without a realm; its approval stays
        // there, so the password the user rotates there is the one git gets next.
        try sandbox.add(url, user: "dave", password: "staff-pw", ["--realm", "Staff"])
        #expect(try helper(sandbox, "get", origin, sandbox.storeArguments).stdout == "username=dave\npassword=staff-pw\n")
        _ = try helper(sandbox, "store", origin + ["username=dave", "password=staff-pw"], sandbox.storeArguments)
        try sandbox.add(url, user: "dave", password: "rotated", ["--realm", "Staff"])
        #expect(try helper(sandbox, "get", origin, sandbox.storeArguments).stdout == "username=dave\npassword=rotated\n")

        // A second realm: nothing is guessed, and the note names both and a remedy that works.
        try sandbox.add(url, user: "erin", password: "admin-pw", ["--realm", "Admins"])
        let ambiguous = try helper(sandbox, "get", origin, sandbox.storeArguments)
        #expect(ambiguous.stdout == "")
        #expect(ambiguous.stderr.contains(#"several realms ("Admins", "Staff")"#), "\(ambiguous.stderr)")
        #expect(ambiguous.stderr.contains("credstore add https://git.example.com:443 --user NAME"), "\(ambiguous.stderr)")
        try sandbox.add(url, user: "frank", password: "origin-pw")
        #expect(try helper(sandbox, "get", origin, sandbox.storeArguments).stdout == "username=frank\npassword=origin-pw\n")
    }

    @Test func theUsernamePicksTheCredentialAndThePortIsKept() throws {
        let sandbox = try Sandbox()
        let origin = ["protocol=https", "host=git.example.com:8443"]
        _ = try helper(sandbox, "store", origin + ["username=alice", "password=a"])
        _ = try helper(sandbox, "store", origin + ["username=bob", "password=b"])
        #expect(try helper(sandbox, "get", origin).stdout == "username=bob\npassword=b\n", "the latest store is the default")
        #expect(try helper(sandbox, "get", origin + ["username=alice"]).stdout == "username=alice\npassword=a\n")
        #expect(try helper(sandbox, "get", origin + ["username=carol"]).stdout == "")
        #expect(try helper(sandbox, "get", ["protocol=https", "host=git.example.com"]).stdout == "", "port 443 is another space")
        #expect(try sandbox.run(["get", "https://git.example.com:8443", "--user", "alice"]).stdout == "a\n")
    }

    /// A port in git's `host` is read as a URL's port is: `:0`, a leading zero or a sign name no
    /// space, so nothing is stored under another port's spelling and nothing answers for it.
    @Test(arguments: ["db.example.com:0", "db.example.com:00443", "db.example.com:+443", "db.example.com:65536"])
    func aPortAURLCouldNotSpellNamesNoSpace(host: String) throws {
        let sandbox = try Sandbox()
        _ = try helper(sandbox, "store", ["protocol=https", "host=db.example.com", "username=alice", "password=p443"])
        _ = try helper(sandbox, "store", ["protocol=https", "host=\(host)", "username=mallory", "password=planted"])
        #expect(try helper(sandbox, "get", ["protocol=https", "host=\(host)"]).stdout == "", "\(host)")
        let listed = try jsonArray(sandbox.run(["list", "--json"]).stdout)
        #expect(listed.count == 1 && listed.first?["user"] as? String == "alice", "\(host): \(listed)")
    }

    /// git reads its lines by bytes: a value that starts with a combining mark (which joins the
    /// `=` before it into one Character) is the value git sent, kept and given back whole.
    @Test func aValueThatStartsWithACombiningMarkIsKeptAsGitSentIt() throws {
        let sandbox = try Sandbox()
        let origin = ["protocol=https", "host=git.example.com"]
        _ = try helper(sandbox, "store", origin + ["username=\u{301}alice", "password=\u{301}s3cret"])
        #expect(try helper(sandbox, "get", origin).stdout == "username=\u{301}alice\npassword=\u{301}s3cret\n")
        // A port's colon followed by a mark is no port: nothing is stored under another host.
        _ = try helper(sandbox, "store", ["protocol=https", "host=db.example.com:\u{301}8443", "username=mallory", "password=planted"])
        let listed = try jsonArray(sandbox.run(["list", "--json"]).stdout)
        #expect(listed.count == 1 && listed.first?["host"] as? String == "git.example.com", "\(listed)")
    }

    @Test func wwwauthPicksTheRealm() throws {
        let sandbox = try Sandbox()
        let origin = ["protocol=https", "host=git.example.com"]
        _ = try helper(sandbox, "store", origin + ["username=alice", "password=in-a", "wwwauth[]=Basic realm=\"Area A\", charset=\"UTF-8\""])
        _ = try helper(sandbox, "store", origin + ["username=bob", "password=in-b", "wwwauth[]=Digest nonce=\"x\", realm=\"Area \\\"B\\\"\""])
        #expect(try sandbox.run(["get", "https://git.example.com", "--realm", "Area A"]).stdout == "in-a\n")
        #expect(try sandbox.run(["get", "https://git.example.com", "--realm", "Area \"B\""]).stdout == "in-b\n")

        #expect(try helper(sandbox, "get", origin + ["wwwauth[]=Bearer error=\"x\"", "wwwauth[]=Basic realm=\"Area A\""]).stdout == "username=alice\npassword=in-a\n")
        #expect(try helper(sandbox, "get", origin + ["wwwauth[]=Digest realm=\"Area \\\"B\\\"\", qop=auth"]).stdout == "username=bob\npassword=in-b\n")
        #expect(try helper(sandbox, "get", origin + ["wwwauth[]=Basic realm=\"Elsewhere\""]).stdout == "")
        // Without a challenge, two realms are ambiguous: nothing on stdout, a note on stderr.
        let ambiguous = try helper(sandbox, "get", origin)
        #expect(ambiguous.stdout == "")
        #expect(ambiguous.stderrIsOneErrorLine)
    }

    @Test func theRealmParserReadsChallenges() {
        #expect(GitCredentialRequest.challengeRealm("Basic realm=\"x y\"") == "x y")
        #expect(GitCredentialRequest.challengeRealm("basic REALM=plain") == "plain")
        #expect(GitCredentialRequest.challengeRealm("Negotiate abc==, Basic realm=\"after\"") == "after")
        #expect(GitCredentialRequest.challengeRealm("Bearer realm=\"oauth\"") == nil)
        #expect(GitCredentialRequest.challengeRealm("Basic") == nil)
        #expect(GitCredentialRequest.challengeRealm("Basic realm=\"unterminated") == nil, "a malformed header names no realm")
    }

    @Test func useHttpPathKeepsRepositoriesApart() throws {
        let sandbox = try Sandbox()
        let origin = ["protocol=https", "host=git.example.com"]
        _ = try helper(sandbox, "store", origin + ["path=team/one.git", "username=alice", "password=one"])
        _ = try helper(sandbox, "store", origin + ["path=team/two.git", "username=alice", "password=two"])
        #expect(try helper(sandbox, "get", origin + ["path=team/one.git"]).stdout == "username=alice\npassword=one\n")
        #expect(try helper(sandbox, "get", origin + ["path=team/two.git"]).stdout == "username=alice\npassword=two\n")
        #expect(try helper(sandbox, "get", origin + ["path=team/three.git"]).stdout == "")
        _ = try helper(sandbox, "erase", origin + ["path=team/one.git", "username=alice"])
        #expect(try helper(sandbox, "get", origin + ["path=team/one.git"]).stdout == "")
        #expect(try helper(sandbox, "get", origin + ["path=team/two.git"]).stdout == "username=alice\npassword=two\n")
    }

    @Test func expiryAndRefreshTokenAreKeptAndAnExpiredPasswordIsNotReturned() throws {
        let sandbox = try Sandbox()
        let origin = ["protocol=https", "host=git.example.com"]
        let future = Int(Date().timeIntervalSince1970) + 3600
        _ = try helper(sandbox, "store", origin + ["username=alice", "password=token", "password_expiry_utc=\(future)", "oauth_refresh_token=refresh"])
        #expect(try helper(sandbox, "get", origin).stdout
            == "username=alice\npassword=token\npassword_expiry_utc=\(future)\noauth_refresh_token=refresh\n")

        _ = try helper(sandbox, "store", origin + ["username=alice", "password=stale", "password_expiry_utc=1000"])
        #expect(try helper(sandbox, "get", origin).stdout == "", "an expired password is not returned")

        // A new password without an expiry drops the old expiry and token with it.
        _ = try helper(sandbox, "store", origin + ["username=alice", "password=fresh"])
        #expect(try helper(sandbox, "get", origin).stdout == "username=alice\npassword=fresh\n")
        _ = try helper(sandbox, "erase", origin + ["username=alice"])
        let listed = try sandbox.run(["list", "--json"])
        #expect(try jsonArray(listed.stdout).isEmpty, "the expiry and token go with the credential: \(listed.stdout)")
    }

    @Test func anExpiredCredentialGivesGitItsRefreshTokenAndNotTheStalePassword() throws {
        let sandbox = try Sandbox()
        let origin = ["protocol=https", "host=git.example.com"]
        // Approve: the access token with its expiry and refresh token, as git's OAuth helpers send them.
        let stored = try helper(sandbox, "store", origin + ["username=alice", "password=gho_stale", "password_expiry_utc=1700000000", "oauth_refresh_token=rt-1"])
        #expect(stored.status == 0, "\(stored.stderr)")
        // Fill after the expiry: the user and the refresh token, never the expired password.
        #expect(try helper(sandbox, "get", origin).stdout == "username=alice\noauth_refresh_token=rt-1\n")
        #expect(try helper(sandbox, "get", origin + ["username=alice"]).stdout == "username=alice\noauth_refresh_token=rt-1\n")
        // The store keeps one credential with its fields, shown by `get --json` (the token redacted there as the password is).
        let json = try sandbox.run(["get", "https://git.example.com", "--user", "alice", "--json"])
        #expect(json.stdout.contains("\"expires\""), "\(json.stdout)")
        // The refreshed token approved: answered before its expiry, with the new refresh token.
        let future = Int(Date().timeIntervalSince1970) + 3600
        _ = try helper(sandbox, "store", origin + ["username=alice", "password=gho_fresh", "password_expiry_utc=\(future)", "oauth_refresh_token=rt-2"])
        #expect(try helper(sandbox, "get", origin).stdout
            == "username=alice\npassword=gho_fresh\npassword_expiry_utc=\(future)\noauth_refresh_token=rt-2\n")
        // Reject: the credential goes, with its expiry and token.
        _ = try helper(sandbox, "erase", origin + ["username=alice", "password=gho_fresh"])
        #expect(try helper(sandbox, "get", origin).stdout == "")
        #expect(try sandbox.run(["list", "--json"]).stdout == "[]\n")
    }

    @Test func anExpiryOfZeroIsNoExpiryAndAnExpiredDefaultDoesNotHideALiveOne() throws {
        let sandbox = try Sandbox()
        let origin = ["protocol=https", "host=git.example.com"]
        // git reads password_expiry_utc=0 as "never expires".
        _ = try helper(sandbox, "store", origin + ["username=alice", "password=forever", "password_expiry_utc=0"])
        #expect(try helper(sandbox, "get", origin).stdout == "username=alice\npassword=forever\n")
        // An expired credential stored without a method (the exact space of git's request) beside a
        // live one stored for Basic, same realm: the live one answers.
        try sandbox.add("https://api.example.com", user: "live", password: "live-pw", ["--realm", "R", "--method", "basic"])
        let expired = try sandbox.run(["add", "https://api.example.com", "--user", "old", "--realm", "R",
                                       "--expires", "2001-01-01T00:00:00Z", "--refresh-token"] + sandbox.storeArguments, stdin: "old-pw\nrt-old\n")
        #expect(expired.status == 0, "\(expired.stderr)")
        let challenge = ["protocol=https", "host=api.example.com", "wwwauth[]=Basic realm=\"R\""]
        #expect(try helper(sandbox, "get", challenge, sandbox.storeArguments).stdout == "username=live\npassword=live-pw\n")
    }

    /// A request without a realm, on an origin whose credential without a realm has expired and
    /// whose one realm holds a live one: the live one answers, not the stale password's refresh.
    @Test func anExpiredCredentialWithoutARealmDoesNotHideTheLiveRealm() throws {
        let sandbox = try Sandbox()
        let url = "https://git.example.com"
        let origin = ["protocol=https", "host=git.example.com"]
        try addExpired(sandbox, url, user: "old", password: "old-pw", refreshToken: "rt-old")
        try sandbox.add(url, user: "dave", password: "staff-pw", ["--realm", "Staff"])
        #expect(try helper(sandbox, "get", origin, sandbox.storeArguments).stdout == "username=dave\npassword=staff-pw\n")
        // With nothing live left, the expired credential answers with its refresh token again.
        #expect(try sandbox.run(["remove", url, "--user", "dave", "--realm", "Staff"] + sandbox.storeArguments).status == 0)
        #expect(try helper(sandbox, "get", origin, sandbox.storeArguments).stdout == "username=old\noauth_refresh_token=rt-old\n")
        // Named by the user, the same: that user's live credential, though an expired one of the
        // same user sits in the space without a realm.
        try sandbox.add(url, user: "dave", password: "staff-pw", ["--realm", "Staff"])
        try addExpired(sandbox, url, user: "dave", password: "stale")
        #expect(try helper(sandbox, "get", origin + ["username=dave"], sandbox.storeArguments).stdout == "username=dave\npassword=staff-pw\n")
    }

    /// git refreshes an expired password with the token `get` gave it and stores the new one:
    /// it replaces the expired credential where that is kept, with the new token, and leaves no
    /// stale copy whose used token `get` would hand out again.
    @Test func aRefreshedPasswordReplacesTheExpiredOneWhereItIsKept() throws {
        let sandbox = try Sandbox()
        let origin = ["protocol=https", "host=git.example.com"]
        try addExpired(sandbox, "https://git.example.com", user: "alice", password: "old", refreshToken: "rt-1", ["--realm", "R"])
        #expect(try helper(sandbox, "get", origin, sandbox.storeArguments).stdout == "username=alice\noauth_refresh_token=rt-1\n")
        _ = try helper(sandbox, "store", origin + ["username=alice", "password=fresh", "oauth_refresh_token=rt-2"], sandbox.storeArguments)
        #expect(try helper(sandbox, "get", origin, sandbox.storeArguments).stdout == "username=alice\npassword=fresh\noauth_refresh_token=rt-2\n")

        // The other way round: the credential without a realm, asked for by a challenge's realm.
        let challenged = ["protocol=https", "host=api.example.com", "wwwauth[]=Basic realm=\"S\""]
        try addExpired(sandbox, "https://api.example.com", user: "bob", password: "old", refreshToken: "rt-b")
        #expect(try helper(sandbox, "get", challenged, sandbox.storeArguments).stdout == "username=bob\noauth_refresh_token=rt-b\n")
        _ = try helper(sandbox, "store", challenged + ["username=bob", "password=fresh-b"], sandbox.storeArguments)

        let listed = try jsonArray(sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout)
        #expect(listed.count == 2, "\(listed)")
        let kept = try #require(listed.first { $0["host"] as? String == "api.example.com" }, "\(listed)")
        #expect(kept["realm"] is NSNull || kept["realm"] == nil, "\(kept)")
        #expect(try sandbox.run(["get", "https://git.example.com", "--realm", "R"] + sandbox.storeArguments).stdout == "fresh\n")
        let renewed = try jsonObject(sandbox.run(["get", "https://git.example.com", "--realm", "R", "--json"] + sandbox.storeArguments).stdout)
        #expect(renewed["refreshToken"] as? String == "rt-2", "\(renewed)")
        #expect(try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments).stdout == "fresh-b\n")
    }

    /// A password git got elsewhere for a user whose credential in a realm has expired without a
    /// refresh token (so `get` gave git nothing of it) is stored where git asked: the realm's
    /// default stays the user chosen there.
    @Test func aPasswordFromElsewhereLeavesARealmsDefaultAlone() throws {
        let sandbox = try Sandbox()
        let url = "https://git.example.com"
        try sandbox.add(url, user: "bob", password: "bob-pw", ["--realm", "R"])
        try addExpired(sandbox, url, user: "alice", password: "old", ["--realm", "R"])
        _ = try helper(sandbox, "store", ["protocol=https", "host=git.example.com", "username=alice", "password=new"], sandbox.storeArguments)
        #expect(try sandbox.run(["get", url, "--realm", "R"] + sandbox.storeArguments).stdout == "bob-pw\n")
        #expect(try sandbox.run(["get", url, "--user", "alice"] + sandbox.storeArguments).stdout == "new\n")
    }

    /// git erases the credential whose password the server refused, expired or not: a live one of
    /// the same user with another password, in the origin's realm, is not mistaken for it.
    @Test func anEraseFindsThePasswordGitNamesBeforeALiveCredentialOfTheSameUser() throws {
        let sandbox = try Sandbox()
        let url = "https://git.example.com"
        let origin = ["protocol=https", "host=git.example.com"]
        try addExpired(sandbox, url, user: "dave", password: "old-pw")
        try sandbox.add(url, user: "dave", password: "staff-pw", ["--realm", "Staff"])
        _ = try helper(sandbox, "erase", origin + ["username=dave", "password=old-pw"], sandbox.storeArguments)
        let listed = try jsonArray(sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout)
        #expect(listed.count == 1 && listed.first?["realm"] as? String == "Staff", "\(listed)")
        #expect(try helper(sandbox, "get", origin, sandbox.storeArguments).stdout == "username=dave\npassword=staff-pw\n")
    }

    /// The credential without a realm is the one the user keeps for git: expired, it still answers
    /// (with its refresh token) rather than an ambiguity between live realms that would tell the
    /// user to store the credential they already have.
    @Test func anExpiredCredentialWithoutARealmAnswersBeforeAmbiguousRealms() throws {
        let sandbox = try Sandbox()
        let url = "https://git.example.com"
        let origin = ["protocol=https", "host=git.example.com"]
        try addExpired(sandbox, url, user: "old", password: "old-pw", refreshToken: "rt-old")
        try sandbox.add(url, user: "dave", password: "staff-pw", ["--realm", "Staff"])
        try sandbox.add(url, user: "frank", password: "ops-pw", ["--realm", "Ops"])
        let answer = try helper(sandbox, "get", origin, sandbox.storeArguments)
        #expect(answer.stdout == "username=old\noauth_refresh_token=rt-old\n")
        #expect(!answer.stderr.contains("several realms"), "\(answer.stderr)")
    }

    /// An origin with a live credential in one realm and an expired one in another: the expired
    /// realm is not a second candidate, so the live one answers instead of an ambiguity.
    @Test func anExpiredRealmIsNotOneOfSeveral() throws {
        let sandbox = try Sandbox()
        let url = "https://git.example.com"
        let origin = ["protocol=https", "host=git.example.com"]
        try sandbox.add(url, user: "dave", password: "staff-pw", ["--realm", "Staff"])
        try addExpired(sandbox, url, user: "erin", password: "admin-pw", ["--realm", "Admins"])
        let answer = try helper(sandbox, "get", origin, sandbox.storeArguments)
        #expect(answer.stdout == "username=dave\npassword=staff-pw\n")
        #expect(!answer.stderr.contains("several realms"), "\(answer.stderr)")
        // Two live realms are still ambiguous.
        try sandbox.add(url, user: "frank", password: "ops-pw", ["--realm", "Ops"])
        let ambiguous = try helper(sandbox, "get", origin, sandbox.storeArguments)
        #expect(ambiguous.stdout == "")
        #expect(ambiguous.stderr.contains(#"several realms ("Ops", "Staff")"#), "\(ambiguous.stderr)")
    }

    @Test func anEmptyUserAndPasswordAreStoredAndAnsweredAsGitApprovedThem() throws {
        let sandbox = try Sandbox()
        let origin = ["protocol=https", "host=sso.example.com"]
        #expect(try helper(sandbox, "store", origin + ["username=", "password="]).status == 0)
        #expect(try helper(sandbox, "get", origin).stdout == "username=\npassword=\n")
    }

    @Test func realGitDoesNotGetAnExpiredPassword() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/git"), "git is not installed: run .ci/setup")
        let sandbox = try Sandbox()
        let request = "protocol=https\nhost=repo.example.com\n"
        // git 2.39 does not pass password_expiry_utc or oauth_refresh_token on to helpers (2.40 and
        // 2.41 added them): they are written here by the protocol's own lines.
        _ = try helper(sandbox, "store", ["protocol=https", "host=repo.example.com", "username=alice", "password=stale",
                                          "password_expiry_utc=1700000000", "oauth_refresh_token=rt"], sandbox.storeArguments)
        let filled = try realGit("fill", request + "\n", in: sandbox)
        #expect(filled.status != 0, "git had no password to use: \(filled.stdout)")
        #expect(!filled.stdout.contains("password=stale"))
        // A fresh approval through git replaces the expired password and drops its expiry.
        let approved = try realGit("approve", request + "username=alice\npassword=fresh\n\n", in: sandbox)
        #expect(approved.status == 0, "\(approved.stderr)")
        let refilled = try realGit("fill", request + "\n", in: sandbox)
        #expect(refilled.status == 0, "\(refilled.stderr)")
        #expect(refilled.stdout.contains("username=alice\npassword=fresh\n"))
    }

    @Test func unknownActionsAndRequestsWithoutAHostAreIgnored() throws {
        let sandbox = try Sandbox()
        #expect(try helper(sandbox, "capabilities", ["protocol=https", "host=x"]).stdout == "")
        _ = try helper(sandbox, "store", ["protocol=https", "username=a", "password=b"])
        #expect(!FileManager.default.fileExists(atPath: sandbox.defaultStore.path))
    }

    @Test func realGitApprovesFillsAndRejects() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/git"), "git is not installed: run .ci/setup")
        let sandbox = try Sandbox()
        let request = "protocol=https\nhost=repo.example.com\n"

        let approved = try realGit("approve", request + "username=alice\npassword=first\n\n", in: sandbox)
        #expect(approved.status == 0, "\(approved.stderr)")
        let filled = try realGit("fill", request + "\n", in: sandbox)
        #expect(filled.status == 0, "\(filled.stderr)")
        #expect(filled.stdout.contains("username=alice\npassword=first\n"))

        // A wrong password: git rejects it, and the helper forgets it.
        let rejected = try realGit("reject", request + "username=alice\npassword=first\n\n", in: sandbox)
        #expect(rejected.status == 0, "\(rejected.stderr)")
        let refilled = try realGit("fill", request + "\n", in: sandbox)
        #expect(refilled.status != 0, "fill should have nothing to give: \(refilled.stdout)")
        #expect(!refilled.stdout.contains("password=first"))
        #expect(try sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout == "[]\n")
    }

    @Test func anExpiryOutsideTheStoredRangeIsRefusedAndEveryListingStillAnswers() throws {
        let sandbox = try Sandbox()
        for expiry in ["9223372036854775807", "253402300800", "92233720368547758"] {
            let stored = try sandbox.run(["git-credential", "store"] + sandbox.storeArguments, stdin: "protocol=https\nhost=github.com\nusername=alice\npassword=x\npassword_expiry_utc=\(expiry)\n\n")
            #expect(stored.status == 65 && stored.stderr.contains("outside 1970-01-01T00:00:00Z through 9999-12-31T23:59:59Z"), "\(expiry): \(stored.stderr)")
        }
        let inRange = try sandbox.run(["git-credential", "store"] + sandbox.storeArguments, stdin: "protocol=https\nhost=github.com\nusername=alice\npassword=x\npassword_expiry_utc=253402300799\n\n")
        #expect(inRange.status == 0, "\(inRange.stderr)")
        for listing in [["list"], ["list", "--json"], ["search", "--host", "github.com"], ["get", "https://github.com", "--json"]] {
            let result = try sandbox.run(listing + sandbox.storeArguments)
            #expect(result.status == 0, "\(listing): \(result.stderr)")
        }
        #expect(try sandbox.run(["list"] + sandbox.storeArguments).stdout.contains("9999-12-31T23:59:59Z"))
    }

    @Test func gitFindsTheHelperByItsShortName() throws {
        let sandbox = try Sandbox()
        // What the install puts beside the binary: a link named as git looks the helper up.
        let bin = sandbox.root.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: bin.appendingPathComponent(CredstoreCommand.gitHelperName).path, withDestinationPath: Sandbox.binary.path)
        let environment = [
            "PATH": "\(bin.path):/usr/bin:/bin", "CREDSTORE_STORE": sandbox.store.path,
            "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "GIT_ASKPASS": "", "SSH_ASKPASS": "",
        ]
        let git = ["-c", "credential.helper=", "-c", "credential.helper=credstore", "credential"]
        let approved = try runProgram("/usr/bin/git", git + ["approve"], stdin: "protocol=https\nhost=git.example.com\nusername=alice\npassword=s3cret\n\n",
                                      in: sandbox, environment: environment)
        #expect(approved.status == 0, "\(approved.stderr)")
        let filled = try runProgram("/usr/bin/git", git + ["fill"], stdin: "protocol=https\nhost=git.example.com\n\n", in: sandbox, environment: environment)
        #expect(filled.status == 0 && filled.stdout.contains("username=alice\npassword=s3cret\n"), "\(filled.stderr)")
        #expect(try sandbox.run(["get", "https://git.example.com"] + sandbox.storeArguments).stdout == "s3cret\n")
    }
}
