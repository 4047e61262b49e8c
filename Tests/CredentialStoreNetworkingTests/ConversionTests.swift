import CredentialStore
import CredentialStoreNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@Suite struct ConversionTests {
    @Test(arguments: ["https", "HTTPS", "NSURLProtectionSpaceHTTPS"])
    func serverSpaceReadsEverySpellingOfTheProtocol(_ name: String) {
        let foundation = URLProtectionSpace(host: "API.Example.com", port: 0, protocol: name, realm: "api",
                                            authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        let space = ProtectionSpace(foundation)
        #expect(space == ProtectionSpace(host: "api.example.com", port: 443, protocol: "https", realm: "api", authenticationMethod: .httpBasic))
        #expect(!space.isProxy)
    }

    @Test(arguments: [
        ("NSURLProtectionSpaceHTTPSProxy", ProxyType.https), ("https", .https),
        ("NSURLProtectionSpaceSOCKSProxy", .socks), ("SOCKS", .socks),
        ("NSURLProtectionSpaceHTTPProxy", .http), ("http", .http),
        ("NSURLProtectionSpaceFTPProxy", .ftp),
    ])
    func proxySpaceReadsEverySpellingOfTheType(_ name: String, _ type: ProxyType) {
        let foundation = URLProtectionSpace(proxyHost: "proxy.local", port: 8080, type: name, realm: "corp",
                                            authenticationMethod: NSURLAuthenticationMethodDefault)
        let space = ProtectionSpace(foundation)
        #expect(space.isProxy)
        #expect(space == ProtectionSpace(proxy: ProxyEndpoint(host: "proxy.local", port: 8080, type: type), realm: "corp"))
    }

    @Test(arguments: ProxyType.allCases)
    func proxySpaceRoundTrips(_ type: ProxyType) {
        let space = ProtectionSpace(proxy: ProxyEndpoint(host: "proxy.local", port: 3128, type: type), realm: "corp", authenticationMethod: .httpDigest)
        let foundation = URLProtectionSpace(space)
        #expect(foundation.isProxy())
        #expect(ProtectionSpace(foundation) == space)
    }

    @Test func serverSpacesRoundTrip() {
        let spaces = [
            ProtectionSpace(host: "example.com", port: 443, protocol: "https", realm: "a", authenticationMethod: .httpBasic),
            ProtectionSpace(host: "example.com", port: 8080, protocol: "http", realm: nil),
            ProtectionSpace(host: "::1", port: 21, protocol: "ftp", realm: "", authenticationMethod: .ntlm),
        ]
        for space in spaces {
            let foundation = URLProtectionSpace(space)
            #expect(!foundation.isProxy())
            #expect(foundation.authenticationMethod == space.authenticationMethod.rawValue)
            #expect(ProtectionSpace(foundation) == space)
        }
    }

    @Test(arguments: Persistence.allCases)
    func credentialRoundTripsWithItsPersistence(_ persistence: Persistence) throws {
        let credential = Credential(user: "alice", password: "pässword", persistence: persistence)
        let foundation = URLCredential(credential)
        #expect(foundation.user == "alice")
        #expect(foundation.password == "pässword")
        #expect(foundation.persistence == URLCredential.Persistence(persistence))
        #expect(try #require(Credential(foundation)) == credential)
    }
}
