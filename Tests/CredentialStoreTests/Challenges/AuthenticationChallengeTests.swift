import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

@Suite struct AuthenticationChallengeTests {
    @Test("The RFC 7235 example gives two challenges with their parameters unescaped")
    func rfc7235Example() throws {
        let challenges = try AuthenticationChallenge.parse([#"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#])
        #expect(challenges == [
            AuthenticationChallenge(scheme: "newauth", parameters: ["realm": "apps", "type": "1", "title": #"Login to "apps""#]),
            AuthenticationChallenge(scheme: "basic", parameters: ["realm": "simple"]),
        ])
        #expect(challenges.map(\.realm) == ["apps", "simple"])
    }

    @Test("The RFC 7617 challenges parse, with the charset parameter")
    func rfc7617Examples() throws {
        #expect(try AuthenticationChallenge.parse([#"Basic realm="WallyWorld""#])
            == [AuthenticationChallenge(scheme: "basic", parameters: ["realm": "WallyWorld"])])
        #expect(try AuthenticationChallenge.parse([#"Basic realm="foo", charset="UTF-8""#])
            == [AuthenticationChallenge(scheme: "basic", parameters: ["realm": "foo", "charset": "UTF-8"])])
    }

    @Test("The RFC 7616 challenges parse across two header fields, line folds included")
    func rfc7616Examples() throws {
        let sha256 = """
            Digest
                realm="http-auth@example.org",
                qop="auth, auth-int",
                algorithm=SHA-256,
                nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v",
                opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
            """
        let md5 = sha256.replacingOccurrences(of: "SHA-256", with: "MD5")
        let challenges = try AuthenticationChallenge.parse([sha256, md5])
        #expect(challenges.count == 2)
        #expect(challenges.allSatisfy { $0.scheme == "digest" && $0.realm == "http-auth@example.org" })
        #expect(challenges.map { $0.parameters["algorithm"] } == ["SHA-256", "MD5"])
        #expect(challenges[0].parameters["qop"] == "auth, auth-int")
        #expect(challenges[0].parameters["nonce"] == "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v")
        #expect(challenges[0].parameters["opaque"] == "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS")
    }

    @Test("Challenges split over several values are all returned in order")
    func severalValues() throws {
        let challenges = try AuthenticationChallenge.parse(["Negotiate", #"Basic realm="a", Digest realm="b", nonce="n""#, "NTLM"])
        #expect(challenges.map(\.scheme) == ["negotiate", "basic", "digest", "ntlm"])
        #expect(challenges[2].parameters == ["realm": "b", "nonce": "n"])
    }

    @Test("Schemes and parameter names are case-insensitive; values keep their case")
    func caseInsensitivity() throws {
        let challenges = try AuthenticationChallenge.parse([#"BASIC REALM="MixedCase", CharSet=UTF-8"#])
        #expect(challenges == [AuthenticationChallenge(scheme: "basic", parameters: ["realm": "MixedCase", "charset": "UTF-8"])])
    }

    @Test("A token68 is kept whole, with its '=' padding, and ends the challenge")
    func token68() throws {
        let challenges = try AuthenticationChallenge.parse(["Negotiate YIIBhgYGKwYBBQUCoIIBejCCAXag==, Basic realm=x", "NTLM abc+/-._~"])
        #expect(challenges.count == 3)
        #expect(challenges[0] == AuthenticationChallenge(scheme: "negotiate", token68: "YIIBhgYGKwYBBQUCoIIBejCCAXag=="))
        #expect(challenges[1] == AuthenticationChallenge(scheme: "basic", parameters: ["realm": "x"]))
        #expect(challenges[2].token68 == "abc+/-._~")
    }

    @Test("Whitespace around '=' and empty list elements are allowed")
    func whitespaceAndEmptyElements() throws {
        let challenges = try AuthenticationChallenge.parse([" , Basic realm = \"r\" ,, , Digest realm=\"d\",nonce = n , ", ""])
        #expect(challenges == [
            AuthenticationChallenge(scheme: "basic", parameters: ["realm": "r"]),
            AuthenticationChallenge(scheme: "digest", parameters: ["realm": "d", "nonce": "n"]),
        ])
        #expect(try AuthenticationChallenge.parse([]).isEmpty)
    }

    @Test("Quoted strings keep commas, '=' and UTF-8, and unescape any quoted pair")
    func quotedStrings() throws {
        let challenges = try AuthenticationChallenge.parse([#"Basic realm="a, b=c \\ \x Zürich""#])
        #expect(challenges.first?.realm == #"a, b=c \ x Zürich"#)
        #expect(try AuthenticationChallenge.parse([#"Basic realm="""#]).first?.realm == "")
    }

    @Test("Malformed headers throw invalidInput", arguments: [
        #"Basic realm="unterminated"#,
        #"Basic realm="a\"#,
        "Basic a=b, realm=",
        "Basic realm=, x=y",
        "Basic realm realm",
        "Basic realm=\"a\", abc==",
        "Basic =x",
        #"Basic"realm""#,
        #"Basic realm="a" junk"#,
        #"Basic realm="a", realm="b""#,
        "Basic realm=\"line\u{1}break\"",
        "=abc",
        "\"quoted\"",
        "Basic realm=a b",
        "Negotiate abc== def",
    ])
    func malformed(header: String) {
        #expect(throws: CredentialStorageError.self) { try AuthenticationChallenge.parse([header]) }
        do {
            _ = try AuthenticationChallenge.parse([header])
        } catch let error as CredentialStorageError {
            #expect(error.code == .invalidInput)
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test("Headers over 64 KiB in total are refused")
    func sizeBound() throws {
        let half = "Basic realm=\"" + String(repeating: "a", count: 33 * 1024) + "\""
        _ = try AuthenticationChallenge.parse([half])
        #expect(throws: CredentialStorageError.self) { try AuthenticationChallenge.parse([half, half]) }
    }
}
