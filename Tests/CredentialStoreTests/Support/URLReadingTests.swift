import Foundation
import Testing
import CredentialStore
import CredentialStoreCore

/// `URLReading`, the one reading of every URL credstore takes in: it finds the host the WHATWG URL
/// standard finds, or refuses the text.
@Suite struct URLReadingTests {
    /// The host cases of the Web Platform Tests' URL test data (web-platform-tests/wpt,
    /// url/resources/urltestdata.json), copied here so that the test needs no network.
    ///
    /// Chosen as: every entry whose input starts with `http://` or `https://` and that has no
    /// base or the base `about:blank`; each kept with its expected `hostname` (brackets and all,
    /// as the data writes an IPv6 host), or nil where the data says `"failure": true`.
    static let whatwgHostCases: [(input: String, hostname: String?)] = [
        ("https://test:@test", "test"),
        ("https://:@test", "test"),
        ("http://example.com/././foo", "example.com"),
        ("http://example.com/./.foo", "example.com"),
        ("http://example.com/foo/.", "example.com"),
        ("http://example.com/foo/./", "example.com"),
        ("http://example.com/foo/bar/..", "example.com"),
        ("http://example.com/foo/bar/../", "example.com"),
        ("http://example.com/foo/..bar", "example.com"),
        ("http://example.com/foo/bar/../ton", "example.com"),
        ("http://example.com/foo/bar/../ton/../../a", "example.com"),
        ("http://example.com/foo/../../..", "example.com"),
        ("http://example.com/foo/../../../ton", "example.com"),
        ("http://example.com/foo/%2e", "example.com"),
        ("http://example.com/foo/%2e%2", "example.com"),
        ("http://example.com/foo/%2e./%2e%2e/.%2e/%2e.bar", "example.com"),
        ("http://example.com////../..", "example.com"),
        ("http://example.com/foo/bar//../..", "example.com"),
        ("http://example.com/foo/bar//..", "example.com"),
        ("http://example.com/foo", "example.com"),
        ("http://example.com/%20foo", "example.com"),
        ("http://example.com/foo%", "example.com"),
        ("http://example.com/foo%2", "example.com"),
        ("http://example.com/foo%2zbar", "example.com"),
        ("http://example.com/foo%2\u{C2}\u{A9}zbar", "example.com"),
        ("http://example.com/foo%41%7a", "example.com"),
        ("http://example.com/foo\u{9}\u{91}%91", "example.com"),
        ("http://example.com/foo%00%51", "example.com"),
        ("http://example.com/(%28:%3A%29)", "example.com"),
        ("http://example.com/%3A%3a%3C%3c", "example.com"),
        ("http://example.com/foo\u{9}bar", "example.com"),
        ("http://example.com\\\\foo\\\\bar", "example.com"),
        ("http://example.com/%7Ffp3%3Eju%3Dduvgw%3Dd", "example.com"),
        ("http://example.com/@asdf%40", "example.com"),
        ("http://example.com/\u{4F60}\u{597D}\u{4F60}\u{597D}", "example.com"),
        ("http://example.com/\u{2025}/foo", "example.com"),
        ("http://example.com/\u{FEFF}/foo", "example.com"),
        ("http://example.com/\u{202E}/foo/\u{202D}/bar", "example.com"),
        ("http://www.google.com/foo?bar=baz#", "www.google.com"),
        ("http://www.google.com/foo?bar=baz# \u{BB}", "www.google.com"),
        ("http://www.google.com", "www.google.com"),
        ("http://192.0x00A80001", "192.168.0.1"),
        ("http://www/foo%2Ehtml", "www"),
        ("http://www/foo/%2E/html", "www"),
        ("http://user:pass@/", nil),
        ("http://%25DOMAIN:foobar@foodomain.com/", "foodomain.com"),
        ("http://foo:80/", "foo"),
        ("http://foo:81/", "foo"),
        ("http://foo:-80/", nil),
        ("https://foo:443/", "foo"),
        ("https://foo:80/", "foo"),
        ("http://@www.example.com", "www.example.com"),
        ("http://a:b@www.example.com", "www.example.com"),
        ("http://@pple.com", "pple.com"),
        ("http://:b@www.example.com", "www.example.com"),
        ("http://user@/www.example.com", nil),
        ("http://@/www.example.com", nil),
        ("http://a:b@/www.example.com", nil),
        ("http://a:@www.example.com", "www.example.com"),
        ("http://www.@pple.com", "pple.com"),
        ("http://@:www.example.com", nil),
        ("http://:@www.example.com", "www.example.com"),
        ("https://\u{FFFD}", nil),
        ("https://%EF%BF%BD", nil),
        ("https://x/\u{FFFD}?\u{FFFD}#\u{FFFD}", "x"),
        ("http://a.b.c.xn--pokxncvks", nil),
        ("http://10.0.0.xn--pokxncvks", nil),
        ("http://a.b.c.XN--pokxncvks", nil),
        ("http://a.b.c.Xn--pokxncvks", nil),
        ("http://10.0.0.XN--pokxncvks", nil),
        ("http://10.0.0.xN--pokxncvks", nil),
        ("https://fa\u{DF}.ExAmPlE/", "xn--fa-hia.example"),
        ("https://x x:12", nil),
        ("http://./", "."),
        ("http://../", ".."),
        ("http://[www.google.com]/", nil),
        ("http://host/?'", "host"),
        ("http://a\u{0}b/", nil),
        ("http://a\u{1}b/", nil),
        ("http://a\u{2}b/", nil),
        ("http://a\u{3}b/", nil),
        ("http://a\u{4}b/", nil),
        ("http://a\u{5}b/", nil),
        ("http://a\u{6}b/", nil),
        ("http://a\u{7}b/", nil),
        ("http://a\u{8}b/", nil),
        ("http://a\u{B}b/", nil),
        ("http://a\u{C}b/", nil),
        ("http://a\u{E}b/", nil),
        ("http://a\u{F}b/", nil),
        ("http://a\u{10}b/", nil),
        ("http://a\u{11}b/", nil),
        ("http://a\u{12}b/", nil),
        ("http://a\u{13}b/", nil),
        ("http://a\u{14}b/", nil),
        ("http://a\u{15}b/", nil),
        ("http://a\u{16}b/", nil),
        ("http://a\u{17}b/", nil),
        ("http://a\u{18}b/", nil),
        ("http://a\u{19}b/", nil),
        ("http://a\u{1A}b/", nil),
        ("http://a\u{1B}b/", nil),
        ("http://a\u{1C}b/", nil),
        ("http://a\u{1D}b/", nil),
        ("http://a\u{1E}b/", nil),
        ("http://a\u{1F}b/", nil),
        ("http://a b/", nil),
        ("http://a%b/", nil),
        ("http://a<b", nil),
        ("http://a>b", nil),
        ("http://a[b/", nil),
        ("http://a]b/", nil),
        ("http://a^b", nil),
        ("http://a|b/", nil),
        ("http://a\u{7F}b/", nil),
        ("http://ho\u{9}st/", "host"),
        ("http://ho\u{A}st/", "host"),
        ("http://ho\u{D}st/", "host"),
        ("http://ho%00st/", nil),
        ("http://ho%01st/", nil),
        ("http://ho%02st/", nil),
        ("http://ho%03st/", nil),
        ("http://ho%04st/", nil),
        ("http://ho%05st/", nil),
        ("http://ho%06st/", nil),
        ("http://ho%07st/", nil),
        ("http://ho%08st/", nil),
        ("http://ho%09st/", nil),
        ("http://ho%0Ast/", nil),
        ("http://ho%0Bst/", nil),
        ("http://ho%0Cst/", nil),
        ("http://ho%0Dst/", nil),
        ("http://ho%0Est/", nil),
        ("http://ho%0Fst/", nil),
        ("http://ho%10st/", nil),
        ("http://ho%11st/", nil),
        ("http://ho%12st/", nil),
        ("http://ho%13st/", nil),
        ("http://ho%14st/", nil),
        ("http://ho%15st/", nil),
        ("http://ho%16st/", nil),
        ("http://ho%17st/", nil),
        ("http://ho%18st/", nil),
        ("http://ho%19st/", nil),
        ("http://ho%1Ast/", nil),
        ("http://ho%1Bst/", nil),
        ("http://ho%1Cst/", nil),
        ("http://ho%1Dst/", nil),
        ("http://ho%1Est/", nil),
        ("http://ho%1Fst/", nil),
        ("http://ho%20st/", nil),
        ("http://ho%23st/", nil),
        ("http://ho%25st/", nil),
        ("http://ho%2Fst/", nil),
        ("http://ho%3Ast/", nil),
        ("http://ho%3Cst/", nil),
        ("http://ho%3Est/", nil),
        ("http://ho%3Fst/", nil),
        ("http://ho%40st/", nil),
        ("http://ho%5Bst/", nil),
        ("http://ho%5Cst/", nil),
        ("http://ho%5Dst/", nil),
        ("http://ho%7Cst/", nil),
        ("http://ho%7Fst/", nil),
        ("http://!\"$&'()*+,-.;=_`{}~/", "!\"$&'()*+,-.;=_`{}~"),
        ("https://example.com%80/", nil),
        ("https://example.com%A0/", nil),
        ("https://%e2%98%83", "xn--n3h"),
        ("http://127.0.0.1:10100/relative_import.html", "127.0.0.1"),
        ("http://facebook.com/?foo=%7B%22abc%22", "facebook.com"),
        ("https://localhost:3000/jqueryui@1.2.3", "localhost"),
        ("http://foo.bar/baz?qux#foo\u{8}bar", "foo.bar"),
        ("http://foo.bar/baz?qux#foo\"bar", "foo.bar"),
        ("http://foo.bar/baz?qux#foo<bar", "foo.bar"),
        ("http://foo.bar/baz?qux#foo>bar", "foo.bar"),
        ("http://foo.bar/baz?qux#foo`bar", "foo.bar"),
        ("https://0x.0x.0", "0.0.0.0"),
        ("https://0x100000000/test", nil),
        ("https://256.0.0.1/test", nil),
        ("https://%43%7C/", nil),
        ("https://[0::0::0]", nil),
        ("https://[0:.0]", nil),
        ("https://[0:0:]", nil),
        ("https://[0:1:2:3:4:5:6:7.0.0.0.1]", nil),
        ("https://[0:1.00.0.0.0]", nil),
        ("https://[0:1.290.0.0.0]", nil),
        ("https://[0:1.23.23]", nil),
        ("http://?", nil),
        ("http://#", nil),
        ("http://0x7f.0.0.0x7g", "0x7f.0.0.0x7g"),
        ("http://0X7F.0.0.0X7G", "0x7f.0.0.0x7g"),
        ("http://[::127.0.0.0.1]", nil),
        ("http://[0:1:0:1:0:1:0:1]", "[0:1:0:1:0:1:0:1]"),
        ("http://[1:0:1:0:1:0:1:0]", "[1:0:1:0:1:0:1:0]"),
        ("http://example.org/test?\"", "example.org"),
        ("http://example.org/test?#", "example.org"),
        ("http://example.org/test?<", "example.org"),
        ("http://example.org/test?>", "example.org"),
        ("http://example.org/test?\u{2323}", "example.org"),
        ("http://example.org/test?%23%23", "example.org"),
        ("http://example.org/test?%GH", "example.org"),
        ("http://example.org/test?a#%EF", "example.org"),
        ("http://example.org/test?a#%GH", "example.org"),
        ("http://example.org/test?a#b\u{0}c", "example.org"),
        ("https://www.example.com/path{\u{7F}path.html?query'\u{7F}=query#fragment<\u{7F}fragment", "www.example.com"),
        ("http://0..0x300/", nil),
        ("http://0..0x300./", nil),
        ("http://1.2.3.08", nil),
        ("http://1.2.3.08.", nil),
        ("http://1.2.3.09", nil),
        ("http://09.2.3.4", nil),
        ("http://09.2.3.4.", nil),
        ("http://01.2.3.4.5", nil),
        ("http://01.2.3.4.5.", nil),
        ("http://0x100.2.3.4", nil),
        ("http://0x100.2.3.4.", nil),
        ("http://0x1.2.3.4.5", nil),
        ("http://0x1.2.3.4.5.", nil),
        ("http://foo.1.2.3.4", nil),
        ("http://foo.1.2.3.4.", nil),
        ("http://foo.2.3.4", nil),
        ("http://foo.2.3.4.", nil),
        ("http://foo.09", nil),
        ("http://foo.09.", nil),
        ("http://foo.0x4", nil),
        ("http://foo.0x4.", nil),
        ("http://foo.09..", "foo.09.."),
        ("http://0999999999999999999/", nil),
        ("http://foo.0x", nil),
        ("http://foo.0XFfFfFfFfFfFfFfFfFfAcE123", nil),
        ("http://\u{1F4A9}.123/", nil),
    ]

    @Test func everyWHATWGHostCaseReadsAsTheStandardReadsItOrIsRefused() {
        var accepted = 0
        for (input, hostname) in Self.whatwgHostCases {
            guard let reading = try? URLReading(input, userInfo: .userOnly) else { continue }
            accepted += 1
            // The data writes an IPv6 host in brackets; a space holds it without them.
            let expected = hostname.map { $0.hasPrefix("[") ? String($0.dropFirst().dropLast()) : $0 }
            #expect(reading.host == expected, "\(String(reflecting: input)) read as \(reading.host), the standard says \(hostname ?? "failure")")
        }
        // Not a reading that refuses everything: the plain cases are read.
        #expect(accepted >= 60)
    }

    @Test func theStandardsOwnRefusalsAreAllRefused() {
        for (input, hostname) in Self.whatwgHostCases where hostname == nil {
            #expect(throws: CredentialStorageError.self, "\(String(reflecting: input))") { try URLReading(input, userInfo: .userOnly) }
        }
    }

    @Test("A text a browser reads as another host than Foundation does is refused with the reason", arguments: [
        ("https://bank.example.com\\@evil.example.com/login", "backslash"),
        ("https://%65vil.example.com", "percent-encoded"),
        ("https://evil.example.com%2ebank.example.com/", "percent-encoded"),
        ("https://0x7f.1/", "ends in a number"),
        ("https://2130706433/", "ends in a number"),
        ("https://exa mple.com/", "white space"),
        ("https://example.com/\u{0}", "control character"),
        ("https://example.com:0/", "port is 0"),
        ("https://example.com:65536/", "port is not a number"),
        ("https://[::ffff:127.0.0.1]/", "IPv6"),
        ("https://::1:8443/", "colon"),
    ])
    func refusesWithTheReason(input: String, reason: String) {
        let error = #expect(throws: CredentialStorageError.self) { try URLReading(input) }
        #expect(error?.code == .invalidInput)
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
    }

    @Test func aPasswordInTheURLIsRefusedAndNeverRepeated() {
        for input in ["https://alice:hunter2@example.com/", "https://alice:hunter2@bank.example.com\\@evil.example.com/",
                      "https://alice:hunter2@", "https://alice:hunter2@%65vil.example.com"] {
            for policy in [URLReading.UserInfo.refused, .userOnly] {
                let error = #expect(throws: CredentialStorageError.self) { try URLReading(input, userInfo: policy) }
                #expect(error?.message.contains("hunter2") == false)
                #expect(error?.message.contains("alice") == false)
            }
        }
    }

    @Test func aUserNameIsReadOnlyWhereTheDoorAllowsIt() throws {
        #expect(throws: CredentialStorageError.self) { try URLReading("https://alice@example.com/") }
        let reading = try URLReading("https://al%69ce@Example.COM:8443/x", userInfo: .userOnly)
        #expect(reading.user == "alice")
        #expect(reading.host == "example.com" && reading.port == 8443 && reading.scheme == "https")
        #expect(reading.origin == "https://example.com:8443")
    }

    /// A combining mark joins the delimiter before it into one Character that equals no
    /// delimiter; the standard, curl and git read the delimiter all the same. Each of these ends
    /// the host at `good.example.com`, with the `@` in the path, query or fragment.
    @Test("A delimiter followed by a combining mark ends the host as the standard ends it", arguments: ["/", "?", "#"])
    func aDelimiterFollowedByACombiningMarkStillEndsTheHost(delimiter: String) throws {
        let text = "https://good.example.com" + delimiter + "\u{301}@evil.example.com/"
        for policy in [URLReading.UserInfo.refused, .userOnly, .discarded] {
            let reading = try URLReading(text, userInfo: policy)
            #expect(reading.host == "good.example.com" && reading.user == nil)
            #expect(reading.rest == delimiter + "\u{301}@evil.example.com/")
        }
    }

    @Test func aCombiningMarkAfterTheColonOrAtOfTheAuthorityIsNotReadAsAnotherHost() {
        // After the port's colon: a port holds digits only. After the last `@`: the host starts
        // with a mark, which no host name does. Both are refused, by Characters or by scalars.
        for text in ["https://example.com:\u{301}443/", "https://alice@\u{301}example.com/", "https://[::1]\u{301}:443/"] {
            #expect(throws: CredentialStorageError.self, "\(String(reflecting: text))") { try URLReading(text, userInfo: .userOnly) }
        }
    }

    @Test func aProxyVariablesLoginIsReadPastAndKeptNowhere() throws {
        let reading = try URLReading("http://alice:hunter2@proxy.example.com:3128", userInfo: .discarded)
        #expect(reading.host == "proxy.example.com" && reading.port == 3128 && reading.user == nil)
        #expect(!String(describing: reading).contains("hunter2"))
    }

    @Test("Plain URLs read to their canonical host", arguments: [
        ("https://Example.COM./path?q#f", "example.com", nil as Int?),
        ("http://192.0.2.1:8080", "192.0.2.1", 8080),
        ("https://[2001:DB8:0:0::1]:8443/", "2001:db8::1", 8443),
        ("https://xn--fa-hia.example/", "xn--fa-hia.example", nil),
        ("https://under_score.example.com", "under_score.example.com", nil),
    ])
    func readsPlainURLs(input: String, host: String, port: Int?) throws {
        let reading = try URLReading(input)
        #expect(reading.host == host && reading.port == port)
        #expect(try ProtectionSpace(url: #require(reading.url)).host == host)
    }

    @Test func aBareHostIsReadByTheSameRules() throws {
        #expect(try URLReading.host("Example.com") == "example.com")
        #expect(try URLReading.host("::1") == "::1")
        #expect(try URLReading.host("[::1]") == "::1")
        for host in ["bank.example.com\\@evil.example.com", "%65vil.example.com", "0x7f.1", "a b", "a..b", ""] {
            #expect(throws: CredentialStorageError.self, "\(host)") { try URLReading.host(host) }
        }
    }

    @Test func aFoundationURLOfTheBackslashTextNamesNoSpace() throws {
        // Foundation reads this text as a URL of evil.example.com with a user name; a browser as
        // one of bank.example.com.
        let url = try #require(URL(string: "https://bank.example.com\\@evil.example.com/login"))
        #expect(throws: CredentialStorageError.self) { try ProtectionSpace(url: url) }
        let encoded = try #require(URL(string: "https://%65vil.example.com/"))
        #expect(throws: CredentialStorageError.self) { try ProtectionSpace(url: encoded) }
    }
}
