import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

/// The identity table of docs/contract.md ("The model"), plus the encodings and checks built on it.
@Suite struct ProtectionSpaceTests {
    private static func server(
        _ host: String, port: Int = 443, protocol proto: String? = "https", realm: String? = "api",
        method: AuthenticationMethod? = nil
    ) -> ProtectionSpace {
        ProtectionSpace(host: host, port: port, protocol: proto, realm: realm, authenticationMethod: method)
    }

    private static func proxy(
        _ host: String, port: Int = 3128, type: ProxyType = .http, realm: String? = "api",
        method: AuthenticationMethod? = nil
    ) -> ProtectionSpace {
        ProtectionSpace(proxy: ProxyEndpoint(host: host, port: port, type: type), realm: realm, authenticationMethod: method)
    }

    // MARK: - Host

    @Test("Hosts that differ only in ASCII case are the same space, read back lowercased", arguments: [
        ("Example.COM", "example.com"), ("WWW.EXAMPLE.ORG", "www.example.org"), ("Éxample.COM", "Éxample.com"),
    ])
    func hostIgnoresASCIICase(spelled: String, canonical: String) {
        #expect(Self.server(spelled) == Self.server(canonical))
        #expect(Self.server(spelled).host == canonical)
    }

    @Test("Non-ASCII uppercase letters in a host are not folded", arguments: [
        ("Éxample.com", "éxample.com"), ("STRAẞE.example", "straße.example"), ("ÅLAND.example", "åland.example"),
    ])
    func hostKeepsNonASCIICase(upper: String, lower: String) {
        #expect(Self.server(upper) != Self.server(lower))
    }

    @Test("One trailing dot of a host is dropped")
    func hostDropsOneTrailingDot() {
        #expect(Self.server("example.com.") == Self.server("example.com"))
        #expect(Self.server("Example.COM.").host == "example.com")
    }

    @Test("Only a single trailing dot is dropped; a host ending in two dots stays distinct and is refused")
    func hostKeepsDoubleTrailingDot() {
        #expect(Self.server("example.com..") != Self.server("example.com"))
        #expect(Self.server("example.com..").host == "example.com..")
        #expect(throws: CredentialStorageError.self) { try Self.server("example.com..").validate() }
    }

    @Test("IPv6 hosts compare by address, with or without brackets and in any spelling", arguments: [
        ("[::1]", "::1"), ("[0:0:0:0:0:0:0:1]", "::1"), ("0:0::1", "::1"),
        ("[2001:DB8::1]", "2001:db8::1"), ("2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
    ])
    func hostNormalisesIPv6(spelled: String, canonical: String) {
        #expect(Self.server(spelled) == Self.server(canonical))
        #expect(Self.server(spelled).host == canonical)
    }

    @Test("Different hosts are different spaces", arguments: [
        ("example.com", "example.org"), ("a.example.com", "example.com"), ("::1", "::2"), ("[::1]", "127.0.0.1"),
    ])
    func differentHostsDiffer(first: String, second: String) {
        #expect(Self.server(first) != Self.server(second))
    }

    // MARK: - Port

    @Test("Port 0 means the protocol's default port", arguments: [
        ("http", 80), ("https", 443), ("ftp", 21), ("ftps", 990), ("socks", 1080),
        ("HTTPS", 443), ("NSURLProtectionSpaceHTTP", 80), ("NSURLProtectionSpaceHTTPSProxy", 443),
    ])
    func portZeroMeansProtocolDefault(proto: String, defaultPort: Int) {
        let implicit = Self.server("example.com", port: 0, protocol: proto)
        #expect(implicit.port == defaultPort)
        #expect(implicit == Self.server("example.com", port: defaultPort, protocol: proto))
    }

    @Test("Port 0 of a proxy means its type's default port", arguments: [
        (ProxyType.http, 80), (.https, 443), (.ftp, 21), (.socks, 1080),
    ])
    func proxyPortZeroMeansTypeDefault(type: ProxyType, defaultPort: Int) {
        let implicit = Self.proxy("proxy.example.com", port: 0, type: type)
        #expect(implicit.port == defaultPort)
        #expect(implicit == Self.proxy("proxy.example.com", port: defaultPort, type: type))
    }

    @Test("A URL without a port is its scheme's registered port", arguments: [
        ("postgres", 5432), ("mysql", 3306), ("redis", 6379), ("amqp", 5672), ("ldaps", 636),
        ("imaps", 993), ("smtp", 25), ("ssh", 22), ("https", 443),
    ])
    func aURLWithoutAPortIsItsSchemesRegisteredPort(scheme: String, port: Int) throws {
        let implicit = try ProtectionSpace(url: URL(string: "\(scheme)://db.internal")!)
        #expect(implicit.port == port)
        #expect(implicit == (try ProtectionSpace(url: URL(string: "\(scheme)://db.internal:\(port)")!)))
    }

    @Test("Port 0 stays 0 for an unknown or missing protocol", arguments: ["gopher", nil] as [String?])
    func portZeroStaysForUnknownProtocol(proto: String?) {
        let space = Self.server("example.com", port: 0, protocol: proto)
        #expect(space.port == 0)
        #expect(space != Self.server("example.com", port: 70, protocol: proto))
    }

    @Test("Ports compare exactly", arguments: [(8443, 443), (8080, 80), (0, 8443), (444, 443)])
    func portsCompareExactly(first: Int, second: Int) {
        #expect(Self.server("example.com", port: first) != Self.server("example.com", port: second))
    }

    // MARK: - Protocol and proxy type

    @Test("Every spelling of a protocol maps to one lowercase token", arguments: [
        ("https", "HTTPS"), ("https", "NSURLProtectionSpaceHTTPS"), ("https", "NSURLProtectionSpaceHTTPSProxy"),
        ("http", "Http"), ("http", "NSURLProtectionSpaceHTTP"), ("ftp", "NSURLProtectionSpaceFTP"),
        ("socks", "NSURLProtectionSpaceSOCKSProxy"),
    ])
    func protocolSpellingsMapToOneToken(token: String, spelling: String) {
        let space = Self.server("example.com", port: 8000, protocol: spelling)
        #expect(space.protocol == token)
        #expect(space == Self.server("example.com", port: 8000, protocol: token))
    }

    // Found by the `url` fuzz target: the prefix was stripped once per pass, so a space built
    // again from its own canonical protocol named another protocol (and default port).
    @Test("Canonicalising a protocol twice changes nothing", arguments: [
        "NSURLProtectionSpaceNSURLProtectionSpaceHTTP", "nsurlprotectionspacensurlprotectionspacehttp",
        "NSURLProtectionSpaceFoo", "NSURLProtectionSpace", "NSURLProtectionSpaceHTTPProxyProxy",
    ])
    func canonicalProtocolsAreStable(spelling: String) throws {
        let space = Self.server("example.com", port: 0, protocol: spelling)
        let again = Self.server(space.host, port: space.port, protocol: space.protocol)
        #expect(again == space)
        #expect(again.protocol == space.protocol && again.port == space.port)
        let fromURL = try ProtectionSpace(url: try #require(URL(string: "\(spelling.lowercased())://example.com/")))
        #expect(ProtectionSpace(host: fromURL.host, port: fromURL.port, protocol: fromURL.protocol, realm: nil) == fromURL)
    }

    @Test("Different protocols on the same host and port are different spaces")
    func differentProtocolsDiffer() {
        #expect(Self.server("example.com", port: 443, protocol: "http") != Self.server("example.com", port: 443, protocol: "https"))
        #expect(Self.server("example.com", port: 443, protocol: nil) != Self.server("example.com", port: 443, protocol: "https"))
    }

    @Test("ProxyType(name:) reads plain names and Foundation's constant names in any case", arguments: [
        ("SOCKS", ProxyType.socks), ("https", .https), ("HTTP", .http), ("ftp", .ftp),
        ("NSURLProtectionSpaceHTTPSProxy", .https), ("NSURLProtectionSpaceSOCKSProxy", .socks),
        ("nsurlprotectionspaceftpproxy", .ftp), ("NSURLProtectionSpaceHTTPProxy", .http),
    ])
    func proxyTypeReadsEverySpelling(name: String, type: ProxyType) {
        #expect(ProxyType(name: name) == type)
    }

    @Test("ProxyType(name:) rejects names that are no proxy type", arguments: [
        "", "gopher", "httpsproxy", " https", "NSURLProtectionSpaceGopherProxy", "NSURLProtectionSpaceProxy",
    ])
    func proxyTypeRejectsNonsense(name: String) {
        #expect(ProxyType(name: name) == nil)
    }

    // MARK: - Realm and method

    @Test("Realms compare exactly and case-sensitively; nil, \"\" and a name are all distinct", arguments: [
        ("api", "API"), (nil, ""), (nil, "x"), ("", "x"), ("api", "api "), ("Zürich", "zürich"),
    ] as [(String?, String?)])
    func realmsCompareExactly(first: String?, second: String?) {
        #expect(Self.server("example.com", realm: first) != Self.server("example.com", realm: second))
    }

    @Test("Identical realms, including nil and \"\", give equal spaces", arguments: [nil, "", "api", "Zürich"] as [String?])
    func identicalRealmsAreEqual(realm: String?) {
        #expect(Self.server("example.com", realm: realm) == Self.server("example.com", realm: realm))
        #expect(Self.server("example.com", realm: realm).realm == realm)
    }

    @Test("A missing authentication method means .default, for servers and proxies")
    func missingMethodMeansDefault() {
        #expect(Self.server("example.com", method: nil) == Self.server("example.com", method: .default))
        #expect(Self.server("example.com", method: nil).authenticationMethod == .default)
        #expect(Self.proxy("proxy.example.com", method: nil) == Self.proxy("proxy.example.com", method: .default))
    }

    @Test("Authentication methods compare exactly", arguments: [
        (AuthenticationMethod.httpBasic, AuthenticationMethod.httpDigest), (.default, .httpBasic), (.ntlm, .negotiate),
        (.httpBasic, AuthenticationMethod(rawValue: "nsurlauthenticationmethodhttpbasic")),
    ])
    func methodsCompareExactly(first: AuthenticationMethod, second: AuthenticationMethod) {
        #expect(Self.server("example.com", method: first) != Self.server("example.com", method: second))
    }

    // MARK: - Proxy versus server

    @Test("A proxy space never equals a server space with the same host, port and realm", arguments: ProxyType.allCases)
    func proxyNeverEqualsServer(type: ProxyType) {
        let proxy = Self.proxy("gateway.example.com", port: 8080, type: type)
        let server = Self.server("gateway.example.com", port: 8080, protocol: type.rawValue)
        #expect(proxy != server)
        #expect(proxy.isProxy && proxy.proxyType == type && proxy.protocol == nil)
        #expect(!server.isProxy && server.proxyType == nil)
    }

    @Test("Proxies of different types are different spaces")
    func proxyTypesDiffer() {
        #expect(Self.proxy("p.example.com", port: 8080, type: .http) != Self.proxy("p.example.com", port: 8080, type: .https))
    }

    // MARK: - Hashing

    static let equalPairs: [(ProtectionSpace, ProtectionSpace)] = [
        (server("example.com"), server("EXAMPLE.com.", port: 0, protocol: "NSURLProtectionSpaceHTTPS")),
        (server("::1", port: 80, protocol: "http"), server("[0:0:0:0:0:0:0:1]", port: 0, protocol: "HTTP")),
        (server("example.com", method: nil), server("Example.com", method: .default)),
        (proxy("p.example.com", port: 1080, type: .socks), proxy("P.Example.Com.", port: 0, type: .socks)),
    ]

    @Test("Equal spaces have equal hashes and collapse in a Set", arguments: equalPairs)
    func equalSpacesHashEqually(first: ProtectionSpace, second: ProtectionSpace) {
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(Set([first, second]).count == 1)
    }

    @Test("A freshly built identical space finds the value stored under the first one", arguments: equalPairs)
    func dictionaryFindsFreshSpace(stored: ProtectionSpace, fresh: ProtectionSpace) {
        var passwords: [ProtectionSpace: String] = [Self.server("other.example.com"): "other", stored: "alice"]
        #expect(passwords[fresh] == "alice")
        passwords[fresh] = "bob"
        #expect(passwords.count == 2)
        #expect(passwords[stored] == "bob")
    }

    // MARK: - init(url:)

    @Test("init(url:) takes scheme, host and port from the URL", arguments: [
        ("https://Example.com/path?q=1", "example.com", 443, "https"),
        ("http://example.com:8080/", "example.com", 8080, "http"),
        ("ftp://files.example.org", "files.example.org", 21, "ftp"),
        ("HTTPS://EXAMPLE.COM.:8443/", "example.com", 8443, "https"),
        ("https://[::1]:8443/x", "::1", 8443, "https"),
        ("gopher://example.com", "example.com", 0, "gopher"),
    ])
    func initFromURL(url: String, host: String, port: Int, proto: String) throws {
        let space = try ProtectionSpace(url: try #require(URL(string: url)), realm: "r", authenticationMethod: .httpDigest)
        #expect(space == Self.server(host, port: port, protocol: proto, realm: "r", method: .httpDigest))
        #expect(space.host == host && space.port == port && space.protocol == proto && !space.isProxy)
    }

    @Test("init(url:) throws invalidProtectionSpace for a URL without a host", arguments: [
        "mailto:a@b", "file:///tmp", "urn:isbn:0451450523", "/relative/path",
    ])
    func initFromURLWithoutHostThrows(url: String) throws {
        let url = try #require(URL(string: url))
        let error = #expect(throws: CredentialStorageError.self) { try ProtectionSpace(url: url) }
        #expect(error?.code == .invalidProtectionSpace)
    }

    // MARK: - receivesCredentialSecurely

    @Test("receivesCredentialSecurely is true only over TLS or with a method that hides the password", arguments: [
        (server("example.com", protocol: "https", method: .httpBasic), true),
        (server("example.com", port: 990, protocol: "ftps", method: .httpBasic), true),
        (proxy("p.example.com", type: .https, method: .httpBasic), true),
        (server("example.com", port: 80, protocol: "http", method: .httpDigest), true),
        (server("example.com", port: 80, protocol: "http", method: .ntlm), true),
        (server("example.com", port: 80, protocol: "http", method: .negotiate), true),
        (proxy("p.example.com", type: .http, method: .httpDigest), true),
        (server("example.com", port: 80, protocol: "http", method: .httpBasic), false),
        (server("example.com", port: 80, protocol: "http", method: nil), false),
        (server("example.com", port: 21, protocol: "ftp", method: .httpBasic), false),
        (proxy("p.example.com", type: .http, method: .httpBasic), false),
        (proxy("p.example.com", type: .socks, method: nil), false),
    ])
    func receivesCredentialSecurely(space: ProtectionSpace, secure: Bool) {
        #expect(space.receivesCredentialSecurely == secure)
    }

    // MARK: - Codable and canonical encoding

    static let variedSpaces: [ProtectionSpace] = [
        server("example.com"),
        server("example.com", realm: nil),
        server("example.com", realm: ""),
        server("example.com", realm: "Zürich 🏔 \u{1}\"quoted\""),
        server("example.com", port: 8443, method: .httpDigest),
        server("example.com", port: 0, protocol: nil, realm: nil),
        server("example.com", port: 0, protocol: "gopher"),
        server("2001:db8::1", port: 80, protocol: "http"),
        server("fe80::1%eth0", port: 80, protocol: "http"),
        server("example.com", method: AuthenticationMethod(rawValue: "X-Custom")),
        proxy("proxy.example.com"),
        proxy("proxy.example.com", port: 1080, type: .socks, realm: nil, method: .httpBasic),
        proxy("proxy.example.com", port: 443, type: .https, realm: ""),
    ]

    @Test("A JSON round trip gives an equal space", arguments: variedSpaces)
    func codableRoundTrip(space: ProtectionSpace) throws {
        let decoded = try JSONDecoder().decode(ProtectionSpace.self, from: JSONEncoder().encode(space))
        #expect(decoded == space)
        #expect(decoded.isProxy == space.isProxy && decoded.realm == space.realm)
    }

    @Test("Decoding JSON canonicalises a non-canonical spelling")
    func decodingCanonicalises() throws {
        let json = #"{"host":"EXAMPLE.com.","port":0,"protocol":"NSURLProtectionSpaceHTTPS","realm":"api"}"#
        let decoded = try JSONDecoder().decode(ProtectionSpace.self, from: Data(json.utf8))
        #expect(decoded == Self.server("example.com"))
    }

    @Test("The canonical encoding rebuilds an equal space", arguments: variedSpaces)
    func canonicalEncodingRoundTrip(space: ProtectionSpace) throws {
        let rebuilt = try ProtectionSpace(canonicalEncoding: space.canonicalEncoding)
        #expect(rebuilt == space)
        #expect(rebuilt.canonicalEncoding == space.canonicalEncoding)
    }

    @Test("Different spaces have different canonical encodings")
    func differentSpacesEncodeDifferently() {
        let spaces = Self.variedSpaces + [
            Self.server("example.com", protocol: "http"), Self.proxy("example.com", port: 443, type: .https),
            Self.server("example.co", realm: "mapi"), Self.server("example.com", method: .httpBasic),
        ]
        #expect(Set(spaces).count == spaces.count)
        #expect(Set(spaces.map(\.canonicalEncoding)).count == spaces.count)
    }

    @Test("Equal spaces have the same canonical encoding", arguments: equalPairs)
    func equalSpacesEncodeAlike(first: ProtectionSpace, second: ProtectionSpace) {
        #expect(first.canonicalEncoding == second.canonicalEncoding)
        #expect(first.originEncoding == second.originEncoding)
    }

    @Test("A truncated, extended or altered canonical encoding is rejected", arguments: [
        server("example.com"), server("example.com", realm: nil), proxy("p.example.com", realm: "Zürich"),
    ])
    func damagedCanonicalEncodingThrows(space: ProtectionSpace) {
        let bytes = space.canonicalEncoding
        for length in 0..<bytes.count {
            #expect(throws: (any Error).self, "prefix of \(length) bytes") {
                try ProtectionSpace(canonicalEncoding: bytes.prefix(length))
            }
        }
        #expect(throws: (any Error).self) { try ProtectionSpace(canonicalEncoding: bytes + [0]) }
        #expect(throws: (any Error).self) { try ProtectionSpace(canonicalEncoding: [2] + bytes.dropFirst()) }
        #expect(throws: (any Error).self) { try ProtectionSpace(canonicalEncoding: [bytes[0], 7] + bytes.dropFirst(2)) }
    }

    // MARK: - validate()

    @Test("validate() rejects a space a store cannot key", arguments: [
        server(""), server("."), server("a b.example.com"), server("example.com/path"), server("a/b"),
        server("tab\there"), server("example.com", port: -1), server("example.com", port: 70000),
        proxy("", port: 8080), proxy("p.example.com", port: 65536),
        // Printable ASCII that is still no host, and non-ASCII that the byte checks do not pass.
        server("example.com.."), server("a:b.example.com"), server("a%b.example.com"), server("user@example.com"),
        server("ex\u{7F}ample.com"), server("ex\u{9B}ample.com"), server("ex\u{202E}ample.com"),
    ])
    func validateRejects(space: ProtectionSpace) {
        let error = #expect(throws: CredentialStorageError.self) { try space.validate() }
        #expect(error?.code == .invalidProtectionSpace)
    }

    @Test("validate() accepts ordinary spaces", arguments: variedSpaces + [
        server("example.com", port: 65535), server("example.com", port: 1, protocol: "http"),
        server("::1"), server("fe80::1%eth0"), server("bücher.example"), server("example.com", realm: "Zürich"),
    ])
    func validateAccepts(space: ProtectionSpace) throws {
        try space.validate()
    }

    // MARK: - Consistency of ==, hash and the encodings

    @Test("A host with two trailing dots is refused by JSON and canonical decoding, as by validate()")
    func doubleTrailingDotIsRefusedByEveryDecoding() throws {
        // Decoding is input like a URL or `set`: the same rules apply.
        let space = Self.server("example.com..")
        #expect(throws: CredentialStorageError.self) { try JSONDecoder().decode(ProtectionSpace.self, from: JSONEncoder().encode(space)) }
        #expect(throws: CredentialStorageError.self) { try ProtectionSpace(canonicalEncoding: space.canonicalEncoding) }
        #expect(throws: CredentialStorageError.self) { try space.validate() }
    }

    @Test("Spaces that compare equal also have equal canonical encodings (Unicode normalisation)")
    func equalityAgreesWithEncodingUnderNormalisation() {
        let composed = Self.server("caf\u{E9}.example", realm: "R\u{E9}seau")
        let decomposed = Self.server("cafe\u{301}.example", realm: "Re\u{301}seau")
        #expect(composed == decomposed)
        #expect(composed.canonicalEncoding == decomposed.canonicalEncoding)
    }
}
