import CredentialStore
import Foundation

// MARK: - Targets

/// Challenge headers: the bytes, split at newlines, as the values of several header fields.
func fuzzChallenge(_ bytes: [UInt8]) {
    let values = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    if let challenges = try? AuthenticationChallenge.parse(values) {
        for challenge in challenges {
            precondition(!challenge.scheme.isEmpty, "a challenge parsed to an empty scheme")
            if challenge.scheme.lowercased() == "digest", var responder = try? DigestResponder(challenge: challenge, clientNonce: { "0a4f113b" }) {
                _ = try? responder.authorization(method: "GET", uri: "/dir/index.html",
                                                 credential: Credential(user: "Mufasa", password: "Circle of Life", persistence: .none))
            }
        }
    }
    let url = URL(string: "http://www.example.com/dir/index.html")!
    _ = try? ProtectionSpace.spaces(for: url, status: 401, headers: values.map { ("WWW-Authenticate", $0) })
    _ = try? ProtectionSpace.spaces(for: url, status: 407, headers: values.map { ("Proxy-Authenticate", $0) },
                                    proxy: (host: "proxy.example.com", port: 3128, type: .http))
}

/// URL to protection space: whatever parses must name the same space when built again from its
/// own (canonical) fields, and compare and hash equal to it.
func fuzzURL(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let url = URL(string: text), let space = try? ProtectionSpace(url: url, realm: "r") else { return }
    let again = ProtectionSpace(host: space.host, port: space.port, protocol: space.protocol, realm: space.realm,
                                authenticationMethod: space.authenticationMethod)
    precondition(again == space && again.hashValue == space.hashValue, "canonicalisation is not stable for \(text.debugDescription)")
}

/// Bundles: dry-run imports into a store that trusts the seed bundles' signer. A dry run must
/// never change the store, whatever the bytes.
final class BundleTarget: @unchecked Sendable {
    let directory: URL
    let storage: CredentialStorage
    let input: URL
    let seeds: [[UInt8]]

    init() throws {
        directory = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("credstore-fuzz-\(UUID().uuidString)", isDirectory: true)
        input = directory.appendingPathComponent("input.csbundle")
        storage = try CredentialStorage(at: directory.appendingPathComponent("store/credentials.db"),
                                        key: .keyFile(directory.appendingPathComponent("store/store.key")))
        // A trusted sender with a few synchronizable credentials, a default and a deletion, so the
        // seeds reach every record type the reader knows.
        let sender = try CredentialStorage(at: directory.appendingPathComponent("sender/credentials.db"),
                                           key: .keyFile(directory.appendingPathComponent("sender/store.key")))
        for index in 0..<3 {
            let space = ProtectionSpace(host: "host\(index).example.com", port: 443, protocol: "https", realm: "realm")
            try sender.set(Credential(user: "user\(index)", password: "pw\(index)", persistence: .synchronizable), for: space)
        }
        let space = ProtectionSpace(host: "host0.example.com", port: 443, protocol: "https", realm: "realm")
        try sender.setDefaultCredential(Credential(user: "user0", password: "pw0", persistence: .synchronizable), for: space)
        _ = try sender.remove(Credential(user: "user2", password: "", persistence: .synchronizable),
                          for: ProtectionSpace(host: "host2.example.com", port: 443, protocol: "https", realm: "realm"),
                          options: [.removeSynchronizable])
        try storage.trustDevice(try sender.devicePublicKey)
        var seeds: [[UInt8]] = []
        let seed = directory.appendingPathComponent("seed.csbundle")
        try sender.exportSynchronizable(to: seed, protection: .recipients([try storage.devicePublicKey]))
        seeds.append([UInt8](try Data(contentsOf: seed)))
        self.seeds = seeds
    }

    func run(_ bytes: [UInt8]) {
        let before = try? storage.entries().count
        do {
            try Data(bytes).write(to: input)
        } catch {
            fatalError("cannot write the fuzz input: \(error)")
        }
        _ = try? storage.importBundle(from: input, dryRun: true)
        precondition((try? storage.entries().count) == before, "a dry-run import changed the store")
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
}

// MARK: - Seeds

/// Seeds for the two text targets: the RFC 7235, 7617 and 7616 examples and a few odd shapes.
let challengeSeeds: [String] = [
    #"Basic realm="WallyWorld""#,
    #"Basic realm="foo", charset="UTF-8""#,
    #"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#,
    #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#,
    #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=MD5, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#,
    #"Digest realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", stale=true"#,
    "Bearer abc.def-ghi~jkl+/==",
    "Negotiate\nBasic realm=\"x\"",
    #"Basic realm="a\"b\\c", , Digest realm=r, nonce=n"#,
]

let urlSeeds: [String] = [
    "https://api.example.com", "http://user@EXAMPLE.com:8080/path?q#f", "https://[::1]:443/",
    "https://xn--bcher-kva.example/", "https://bücher.example/", "ftp://example.com:21", "HTTP://Example.COM.:80/",
    "https://192.168.0.1./", "git+ssh://host/repo", "https://a..b/",
]


/// The target named `name` and its seeds; the bundle target opens its store on first use.
func fuzzTarget(named name: String) throws -> (run: ([UInt8]) -> Void, seeds: [[UInt8]])? {
    switch name {
    case "challenge": return (fuzzChallenge, challengeSeeds.map { Array($0.utf8) })
    case "url": return (fuzzURL, urlSeeds.map { Array($0.utf8) })
    case "bundle":
        let target = try BundleTarget()
        return (target.run, target.seeds)
    default: return nil
    }
}
