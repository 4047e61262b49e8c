import CredentialStore
import CredentialStoreCLI
import Foundation
import Testing

/// JSON and tables as scripts and people read them.
struct OutputTests {
    @Test func jsonStringsAreEscapedPerRFC8259() throws {
        let text = "quote\" backslash\\ newline\n tab\t bell\u{07} del\u{7F} é 🔑 \u{2028}"
        let rendered = JSONValue.object([("s", .string(text)), ("n", .null), ("b", .bool(false)), ("i", .number(-3)), ("a", .array([]))]).rendered
        #expect(rendered == #"{"s":"quote\" backslash\\ newline\n tab\t bell\u0007 del\u007f é 🔑 \u2028","n":null,"b":false,"i":-3,"a":[]}"#)
        let decoded = try jsonObject(rendered)
        #expect(decoded["s"] as? String == text)
    }

    @Test func tablesAlignColumnsAndEscapeControlCharacters() {
        var table = Table(header: ["A", "LONGER"])
        table.rows = [["wide cell", "x"], ["line\nbreak", ""]]
        #expect(table.rendered == """
            A            LONGER
            wide cell    x
            line\\nbreak

            """)
    }

    @Test func timestampsAreISO8601InUTC() {
        #expect(Describe.timestamp(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(Describe.timestamp(Date(timeIntervalSince1970: 1_738_315_800.9)) == "2025-01-31T09:30:00Z")
    }

    /// A date beyond what gmtime(3) reaches (one an older version stored) prints as the nearest
    /// it does: a listing never traps on a value read from disk or a bundle.
    @Test func aTimestampBeyondTheCalendarPrintsWithoutATrap() {
        #expect(Describe.timestamp(Date(timeIntervalSince1970: 9.3e18)) == "9999-12-31T23:59:59Z")
        #expect(Describe.timestamp(Date(timeIntervalSince1970: 1e300)) == "9999-12-31T23:59:59Z")
        #expect(Describe.timestamp(Date(timeIntervalSince1970: 253_402_300_799)) == "9999-12-31T23:59:59Z")
    }

    @Test func methodsUseTheOptionWords() {
        #expect(Describe.method(.httpBasic) == "basic")
        #expect(Describe.method(.htmlForm) == "form")
        #expect(Describe.method(.default) == "any")
        #expect(Describe.method(.clientCertificate) == "NSURLAuthenticationMethodClientCertificate")
    }

    @Test func spacesReadAsURLs() {
        #expect(Describe.space(ProtectionSpace(host: "::1", port: 8443, protocol: "https", realm: "R", authenticationMethod: .httpDigest))
                == "https://[::1]:8443 realm \"R\" (digest)")
        #expect(Describe.space(ProtectionSpace(proxy: ProxyEndpoint(host: "proxy", port: 0, type: .socks), realm: nil)) == "proxy socks://proxy:1080")
    }
}
