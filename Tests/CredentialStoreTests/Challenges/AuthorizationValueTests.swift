import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

@Suite struct BasicAuthorizationTests {
    @Test("Basic encodes the RFC 7617 example Aladdin / open sesame")
    func rfc7617Example() throws {
        #expect(try AuthorizationValue.basic(user: "Aladdin", password: "open sesame") == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
    }

    @Test("Basic encodes in UTF-8, as the RFC 7617 charset example test / 123£ shows")
    func rfc7617UTF8Example() throws {
        #expect(try AuthorizationValue.basic(user: "test", password: "123£") == "Basic dGVzdDoxMjPCow==")
    }

    @Test("Basic normalises to NFC, so composed and decomposed spellings encode alike")
    func normalisation() throws {
        #expect(try AuthorizationValue.basic(user: "re\u{301}mi", password: "x") == AuthorizationValue.basic(user: "r\u{e9}mi", password: "x"))
    }

    @Test("Basic refuses a user with ':' and control characters, but allows ':' in the password")
    func refusals() throws {
        #expect(throws: CredentialStorageError.self) { try AuthorizationValue.basic(user: "a:b", password: "pw") }
        #expect(throws: CredentialStorageError.self) { try AuthorizationValue.basic(user: "a", password: "p\nw") }
        #expect(throws: CredentialStorageError.self) { try AuthorizationValue.basic(user: "a\u{0}", password: "pw") }
        #expect(try AuthorizationValue.basic(user: "a", password: "p:w") == "Basic YTpwOnc=")
    }
}

@Suite struct DigestResponderTests {
    static let credential = Credential(user: "Mufasa", password: "Circle of Life", persistence: .forSession)
    static let cnonce = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"

    static func rfc7616Challenge(algorithm: String) throws -> AuthenticationChallenge {
        let header = #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=\#(algorithm), nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#
        return try #require(AuthenticationChallenge.parse([header]).first)
    }

    /// Parses an Authorization value back, to check fields without depending on their order.
    static func fields(_ value: String) throws -> [String: String] {
        let parsed = try #require(AuthenticationChallenge.parse([value]).first)
        #expect(parsed.scheme == "digest")
        return parsed.parameters
    }

    @Test("The RFC 7616 §3.9.1 examples give their MD5 and SHA-256 responses", arguments: [("MD5", "8ca523f5e9506fed4657c9700eebdbec"), ("SHA-256", "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1")])
    func rfc7616Example(algorithm: String, expected: String) throws {
        var responder = try DigestResponder(challenge: Self.rfc7616Challenge(algorithm: algorithm), clientNonce: { Self.cnonce })
        let value = try responder.authorization(method: "GET", uri: "/dir/index.html", credential: Self.credential)
        #expect(value.hasPrefix("Digest username=\"Mufasa\", "))
        let fields = try Self.fields(value)
        #expect(fields == [
            "username": "Mufasa",
            "realm": "http-auth@example.org",
            "uri": "/dir/index.html",
            "algorithm": algorithm,
            "nonce": "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v",
            "nc": "00000001",
            "cnonce": Self.cnonce,
            "qop": "auth",
            "response": expected,
            "opaque": "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS",
        ])
    }

    @Test("The session variants and the RFC 2069 form without qop compute the right response")
    func sessionAndLegacy() throws {
        let credential = Self.credential
        let cases: [(String, String)] = [
            (#"Digest realm="http-auth@example.org", nonce="n1", qop=auth, algorithm=MD5-sess"#, "ea076b1bf4bcdf5c79c21f8fee770ce5"),
            (#"Digest realm="http-auth@example.org", nonce="n1", qop=auth, algorithm=sha-256-SESS"#, "4d98c5c9ae31fe2a01d852e583af3c140252fbd791fbe7de9f0f3664ed04c5f4"),
            (#"Digest realm="http-auth@example.org", nonce="n1""#, "ba460545a56658cbd09f29ecb5d24d44"),
            (#"Digest realm="http-auth@example.org", nonce="n1", algorithm=SHA-256"#, "2160b3412b4b22f361b451d390c63186ff6e823a132c68da6a575d2a1544e1ed"),
        ]
        for (header, expected) in cases {
            let challenge = try #require(AuthenticationChallenge.parse([header]).first)
            var responder = try DigestResponder(challenge: challenge, clientNonce: { "c1" })
            let fields = try Self.fields(responder.authorization(method: "GET", uri: "/dir/index.html", credential: credential))
            #expect(fields["response"] == expected, "\(header)")
            if challenge.parameters["qop"] == nil {
                #expect(fields["nc"] == nil && fields["cnonce"] == nil && fields["qop"] == nil)
            }
        }
    }

    @Test("The nonce count goes up per request and restarts with a new nonce")
    func nonceCount() throws {
        var responder = try DigestResponder(challenge: Self.rfc7616Challenge(algorithm: "MD5"))
        var counts: [String] = []
        var cnonces: Set<String> = []
        for _ in 0..<3 {
            let fields = try Self.fields(responder.authorization(method: "GET", uri: "/", credential: Self.credential))
            counts.append(fields["nc"] ?? "")
            cnonces.insert(fields["cnonce"] ?? "")
        }
        #expect(counts == ["00000001", "00000002", "00000003"])
        #expect(cnonces.count == 3, "each request gets a fresh random cnonce")

        let sameNonce = try Self.rfc7616Challenge(algorithm: "MD5")
        try responder.renew(with: sameNonce)
        #expect(try Self.fields(responder.authorization(method: "GET", uri: "/", credential: Self.credential))["nc"] == "00000004")

        let fresh = try #require(AuthenticationChallenge.parse([#"Digest realm="http-auth@example.org", nonce="other", qop=auth, stale=TRUE"#]).first)
        #expect(responder.challengeIsStale(fresh))
        try responder.renew(with: fresh)
        let fields = try Self.fields(responder.authorization(method: "GET", uri: "/", credential: Self.credential))
        #expect(fields["nc"] == "00000001")
        #expect(fields["nonce"] == "other")
    }

    @Test("Only a Digest challenge for the same realm with stale=true is stale")
    func staleness() throws {
        let responder = try DigestResponder(challenge: Self.rfc7616Challenge(algorithm: "MD5"))
        let cases: [(String, Bool)] = [
            (#"Digest realm="http-auth@example.org", nonce="x", stale=true"#, true),
            (#"Digest realm="http-auth@example.org", nonce="x", stale="true""#, true),
            (#"Digest realm="http-auth@example.org", nonce="x", stale=false"#, false),
            (#"Digest realm="http-auth@example.org", nonce="x""#, false),
            (#"Digest realm="other", nonce="x", stale=true"#, false),
            (#"Basic realm="http-auth@example.org", stale=true"#, false),
        ]
        for (header, stale) in cases {
            let challenge = try #require(AuthenticationChallenge.parse([header]).first)
            #expect(responder.challengeIsStale(challenge) == stale, "\(header)")
        }
    }

    @Test("Quotes in the user, realm and uri are escaped, and userhash=false is sent when offered")
    func quotingAndUserhash() throws {
        let challenge = try #require(AuthenticationChallenge.parse([#"Digest realm="a \"b\"", nonce="n", qop=auth, userhash=true"#]).first)
        var responder = try DigestResponder(challenge: challenge, clientNonce: { "c" })
        let value = try responder.authorization(method: "GET", uri: "/q\"", credential: Credential(user: #"x"y\z"#, password: "p", persistence: .none))
        #expect(value.contains(#"username="x\"y\\z""#))
        let fields = try Self.fields(value)
        #expect(fields["realm"] == #"a "b""#)
        #expect(fields["uri"] == "/q\"")
        #expect(fields["userhash"] == "false")
        #expect(fields["username"] == #"x"y\z"#)
    }

    @Test("A non-ASCII user is sent as username* in RFC 5987 encoding")
    func extendedUsername() throws {
        var responder = try DigestResponder(challenge: Self.rfc7616Challenge(algorithm: "SHA-256"), clientNonce: { "c" })
        let value = try responder.authorization(method: "GET", uri: "/", credential: Credential(user: "J\u{e4}s\u{f8}n Doe", password: "p", persistence: .none))
        #expect(value.contains("username*=UTF-8''J%C3%A4s%C3%B8n%20Doe"))
        #expect(!value.contains("username="))
    }

    @Test("Challenges that cannot be answered are refused with invalidInput", arguments: [
        #"Basic realm="x""#,
        #"Digest realm="x""#,
        #"Digest nonce="n""#,
        #"Digest realm="x", nonce="n", algorithm=SHA-512"#,
        #"Digest realm="x", nonce="n", qop="auth-int""#,
        #"Digest realm="x", nonce="n", algorithm=MD5-sess"#,
    ])
    func unanswerable(header: String) throws {
        let challenge = try #require(AuthenticationChallenge.parse([header]).first)
        #expect(throws: CredentialStorageError.self) { try DigestResponder(challenge: challenge) }
    }
}
