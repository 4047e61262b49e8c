import Foundation
import Testing

/// A credential whose password has expired: every form of `get` says so (whose, since when, and
/// the command that renews it) with exit 75, never "not found"; `list` and `search` do not show it
/// as the default, since `get` does not answer with it.
struct ExpiredCredentialCommandTests {
    static let past = "2001-01-01T00:00:00Z"

    /// A sandbox holding alice's credential for https://old.example.com, expired in 2001, with a
    /// refresh token.
    private func expiredAlice() throws -> Sandbox {
        let sandbox = try Sandbox()
        let added = try sandbox.run(["add", "https://old.example.com", "--user", "alice", "--expires", Self.past, "--refresh-token"] + sandbox.storeArguments,
                                    stdin: "stale-pw\nrefresh-1\n")
        #expect(added.status == 0, "\(added.stderr)")
        return sandbox
    }

    /// The one error line of an expired answer: whose, for which space, since when, how to renew.
    private func expectExpired(_ result: RunResult, user: String, space: String, renewal: String,
                               sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 75, "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderrIsOneErrorLine, "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains("the credential of \(user) for \(space) expired at \(Self.past)"), "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains("`\(renewal)`"), "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(!result.stderr.contains("stale-pw") && !result.stderr.contains("refresh-1"), sourceLocation: sourceLocation)
    }

    @Test func getSaysTheOnlyAnswerExpiredWithAndWithoutUser() throws {
        let sandbox = try expiredAlice()
        let renewal = "credstore add https://old.example.com --user alice --expires TIME"
        for extra in [[], ["--user", "alice"]] {
            let got = try sandbox.run(["get", "https://old.example.com"] + extra + sandbox.storeArguments)
            expectExpired(got, user: "alice", space: "https://old.example.com:443", renewal: renewal)
            #expect(got.stdout.isEmpty, "a stale password is not printed for a script to use: \(got.stdout)")
        }
        // Another user, or another host, is still simply not there.
        #expect(try sandbox.run(["get", "https://old.example.com", "--user", "bob"] + sandbox.storeArguments).status == 1)
        #expect(try sandbox.run(["get", "https://new.example.com"] + sandbox.storeArguments).status == 1)
    }

    @Test func theRenewalItAdvisesMakesGetAnswerAgain() throws {
        let sandbox = try expiredAlice()
        let got = try sandbox.run(["get", "https://old.example.com"] + sandbox.storeArguments)
        #expect(got.status == 75)
        let renewed = try sandbox.run(["add", "https://old.example.com", "--user", "alice", "--expires", "30d"] + sandbox.storeArguments,
                                      stdin: "fresh-pw\n")
        #expect(renewed.status == 0, "\(renewed.stderr)")
        let again = try sandbox.run(["get", "https://old.example.com"] + sandbox.storeArguments)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout == "fresh-pw\n")
    }

    @Test func getJSONShowsTheExpiredCredentialAndStillFails() throws {
        let sandbox = try expiredAlice()
        for extra in [[], ["--user", "alice"]] {
            let got = try sandbox.run(["get", "https://old.example.com", "--json"] + extra + sandbox.storeArguments)
            expectExpired(got, user: "alice", space: "https://old.example.com:443",
                          renewal: "credstore add https://old.example.com --user alice --expires TIME")
            // Marked expired, with the refresh token that may renew it.
            let object = try jsonObject(got.stdout)
            #expect(object["expired"] as? Bool == true)
            #expect(object["expires"] as? String == Self.past)
            #expect(object["refreshToken"] as? String == "refresh-1")
        }
    }

    @Test func theURLBestMatchOfAnotherRealmSaysItExpiredAndNamesTheRealm() throws {
        let sandbox = try Sandbox()
        let added = try sandbox.run(["add", "https://api.example.com", "--realm", "Staff Only", "--user", "bob", "--expires", Self.past] + sandbox.storeArguments,
                                    stdin: "stale-pw\n")
        #expect(added.status == 0, "\(added.stderr)")
        let got = try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments)
        expectExpired(got, user: "bob", space: "https://api.example.com:443 realm \"Staff Only\"",
                      renewal: "credstore add https://api.example.com --realm 'Staff Only' --user bob --expires TIME")
        // --json names the realm that would have answered.
        let json = try sandbox.run(["get", "https://api.example.com", "--json"] + sandbox.storeArguments)
        #expect(json.status == 75)
        #expect((try jsonObject(json.stdout)["space"] as? [String: Any])?["realm"] as? String == "Staff Only")
        // A live default of another realm answers instead.
        try sandbox.add("https://api.example.com", user: "carol", password: "live-pw", ["--realm", "Guests"])
        let live = try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments)
        #expect(live.status == 0, "\(live.stderr)")
        #expect(live.stdout == "live-pw\n")
    }

    @Test func severalExpiredRealmsSayTheyAllExpired() throws {
        let sandbox = try Sandbox()
        for realm in ["A", "B"] {
            let added = try sandbox.run(["add", "https://api.example.com", "--realm", realm, "--user", "bob", "--expires", Self.past] + sandbox.storeArguments,
                                        stdin: "stale-pw\n")
            #expect(added.status == 0, "\(added.stderr)")
        }
        let got = try sandbox.run(["get", "https://api.example.com"] + sandbox.storeArguments)
        #expect(got.status == 75, "\(got.stderr)")
        #expect(got.stderrIsOneErrorLine)
        #expect(got.stderr.contains("\"A\", \"B\"") && got.stderr.contains("expired"), "\(got.stderr)")
        #expect(got.stderr.contains("`credstore add https://api.example.com --realm REALM --user NAME --expires TIME`"), "\(got.stderr)")
    }

    @Test func anExpiredDefaultOfACompatibleMethodSaysSoNamingItsMethod() throws {
        let sandbox = try Sandbox()
        let added = try sandbox.run(["add", "https://api.example.com", "--realm", "R", "--method", "basic", "--user", "bob", "--expires", Self.past] + sandbox.storeArguments,
                                    stdin: "stale-pw\n")
        #expect(added.status == 0, "\(added.stderr)")
        let got = try sandbox.run(["get", "https://api.example.com", "--realm", "R"] + sandbox.storeArguments)
        expectExpired(got, user: "bob", space: "https://api.example.com:443 realm \"R\" (basic)",
                      renewal: "credstore add https://api.example.com --realm R --method basic --user bob --expires TIME")
    }

    @Test func gitGetsNothingAndItsUserReadsWhyOnStderr() throws {
        let sandbox = try Sandbox()
        let added = try sandbox.run(["add", "https://git.example.com", "--user", "alice", "--expires", Self.past] + sandbox.storeArguments,
                                    stdin: "stale-pw\n")
        #expect(added.status == 0, "\(added.stderr)")
        let request = "protocol=https\nhost=git.example.com\n\n"
        let got = try sandbox.run(["git-credential"] + sandbox.storeArguments + ["get"], stdin: request)
        // Exit 0 and nothing on stdout: git asks its next helper or the user, as for no credential.
        #expect(got.status == 0, "\(got.stderr)")
        #expect(got.stdout.isEmpty)
        #expect(got.stderrIsOneErrorLine, "\(got.stderr)")
        #expect(got.stderr.contains("the credential of alice for https://git.example.com:443 expired at \(Self.past)"), "\(got.stderr)")
        #expect(!got.stderr.contains("stale-pw"))

        // With a refresh token, git gets the user and the token, and no note: that is an answer.
        let withToken = try sandbox.run(["add", "https://git.example.com", "--user", "alice", "--expires", Self.past, "--refresh-token"] + sandbox.storeArguments,
                                        stdin: "stale-pw\nrefresh-1\n")
        #expect(withToken.status == 0, "\(withToken.stderr)")
        let refreshed = try sandbox.run(["git-credential"] + sandbox.storeArguments + ["get"], stdin: request)
        #expect(refreshed.status == 0)
        #expect(refreshed.stdout == "username=alice\noauth_refresh_token=refresh-1\n")
        #expect(refreshed.stderr.isEmpty, "\(refreshed.stderr)")
    }

    @Test func gitStillGetsTheRefreshTokenOfTheOneRealmsExpiredDefault() throws {
        let sandbox = try Sandbox()
        let added = try sandbox.run(["add", "https://git.example.com", "--realm", "R", "--user", "alice", "--expires", Self.past, "--refresh-token"] + sandbox.storeArguments,
                                    stdin: "stale-pw\nrefresh-1\n")
        #expect(added.status == 0, "\(added.stderr)")
        let got = try sandbox.run(["git-credential"] + sandbox.storeArguments + ["get"], stdin: "protocol=https\nhost=git.example.com\n\n")
        #expect(got.status == 0, "\(got.stderr)")
        #expect(got.stdout == "username=alice\noauth_refresh_token=refresh-1\n")
    }

    @Test func listAndSearchDoNotShowAnExpiredCredentialAsTheDefault() throws {
        let sandbox = try expiredAlice()
        try sandbox.add("https://live.example.com", user: "bob", password: "pw")

        let json = try jsonArray(try sandbox.run(["list", "--json"] + sandbox.storeArguments).stdout)
        let alice = try #require(json.first { $0["user"] as? String == "alice" })
        #expect(alice["isDefault"] as? Bool == false, "get does not answer with it")
        #expect(alice["expired"] as? Bool == true)
        #expect(json.first { $0["user"] as? String == "bob" }?["isDefault"] as? Bool == true)

        for command in [["search", "--expired", "--json"], ["search", "--host", "*.example.com", "--json"], ["list", "--host", "old.example.com", "--json"]] {
            let found = try sandbox.run(command + sandbox.storeArguments)
            #expect(found.status == 0, "\(command): \(found.stderr)")
            let entry = try #require(try jsonArray(found.stdout).first { $0["user"] as? String == "alice" }, "\(command)")
            #expect(entry["isDefault"] as? Bool == false, "\(command)")
        }

        // The table: no default mark on alice's line, the expiry marked instead; bob's marked.
        let table = try sandbox.run(["list"] + sandbox.storeArguments).stdout.split(separator: "\n")
        let header = try #require(table.first)
        let defaultColumn = header.distance(from: header.startIndex, to: try #require(header.range(of: "DEFAULT")).lowerBound)
        for line in table.dropFirst() {
            let mark = line.dropFirst(defaultColumn).prefix(3)
            if line.contains("alice") {
                #expect(mark.trimmingCharacters(in: .whitespaces).isEmpty, "\(line)")
                #expect(line.contains("\(Self.past) (expired)"))
            } else {
                #expect(mark == "yes", "\(line)")
            }
        }
    }
}
