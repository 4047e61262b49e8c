import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

@Suite struct ChallengeSpacesTests {
    static let url = URL(string: "https://Example.com/dir/index.html")!
    static let headers: [(name: String, value: String)] = [
        (name: "www-authenticate", value: #"Basic realm="site", Digest realm="site", nonce="n""#),
        (name: "Content-Type", value: "text/html"),
        (name: "WWW-Authenticate", value: "Negotiate, NTLM, Newauth realm=\"apps\""),
        (name: "Proxy-Authenticate", value: #"Basic realm="proxy""#),
    ]
    static let proxy = ProxyEndpoint(host: "proxy.local", port: 3128, type: .http)

    @Test("A 401 gives one server space per WWW-Authenticate challenge, with realm and method")
    func serverSpaces() throws {
        let spaces = try ProtectionSpace.spaces(for: Self.url, status: 401, headers: Self.headers, proxy: Self.proxy)
        #expect(spaces == [
            ProtectionSpace(host: "example.com", port: 443, protocol: "https", realm: "site", authenticationMethod: .httpBasic),
            ProtectionSpace(host: "example.com", port: 443, protocol: "https", realm: "site", authenticationMethod: .httpDigest),
            ProtectionSpace(host: "example.com", port: 443, protocol: "https", realm: nil, authenticationMethod: .negotiate),
            ProtectionSpace(host: "example.com", port: 443, protocol: "https", realm: nil, authenticationMethod: .ntlm),
            ProtectionSpace(host: "example.com", port: 443, protocol: "https", realm: "apps", authenticationMethod: .default),
        ])
        #expect(spaces.allSatisfy { !$0.isProxy })
    }

    @Test("A 407 gives proxy spaces from Proxy-Authenticate only, never equal to server spaces")
    func proxySpaces() throws {
        let spaces = try ProtectionSpace.spaces(for: Self.url, status: 407, headers: Self.headers, proxy: Self.proxy)
        #expect(spaces == [ProtectionSpace(proxy: ProxyEndpoint(host: "proxy.local", port: 3128, type: .http), realm: "proxy", authenticationMethod: .httpBasic)])
        let server = try ProtectionSpace.spaces(for: Self.url, status: 401, headers: Self.headers)
        #expect(Set(spaces).isDisjoint(with: server))
    }

    @Test("A 407 without a proxy throws invalidInput")
    func proxyMissing() {
        #expect(throws: CredentialStorageError.self) {
            try ProtectionSpace.spaces(for: Self.url, status: 407, headers: Self.headers)
        }
    }

    @Test("Other statuses give no spaces, whatever the headers")
    func otherStatuses() throws {
        for status in [200, 302, 403, 500] {
            #expect(try ProtectionSpace.spaces(for: Self.url, status: status, headers: Self.headers).isEmpty)
        }
    }

    @Test("Identical challenges give one space, and a malformed one throws")
    func duplicatesAndErrors() throws {
        let twice: [(name: String, value: String)] = [(name: "WWW-Authenticate", value: "Basic realm=a"), (name: "WWW-Authenticate", value: "basic REALM=a")]
        #expect(try ProtectionSpace.spaces(for: Self.url, status: 401, headers: twice).count == 1)
        #expect(throws: CredentialStorageError.self) {
            try ProtectionSpace.spaces(for: Self.url, status: 401, headers: [(name: "WWW-Authenticate", value: "Basic realm=\"")])
        }
    }
}
