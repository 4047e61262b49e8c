import CredentialStore
import Foundation
import CredentialStoreFormats

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
                                    proxy: ProxyEndpoint(host: "proxy.example.com", port: 3128, type: .http))
}

/// URL to protection space: whatever parses must name the same space when built again from its
/// own (canonical) fields, and compare and hash equal to it.
func fuzzURL(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    // The one URL reading, straight from the text (Foundation refuses much of what a CLI argument
    // or an imported file can hold): a reading never finds a host with a character a host cannot
    // have, never keeps a password, and its own spelling reads back to the same place.
    for userInfo in [URLReading.UserInfo.refused, .userOnly, .discarded] {
        guard let reading = try? URLReading(text, userInfo: userInfo) else { continue }
        precondition(!reading.host.isEmpty && !reading.host.contains(where: { "\\/@?#% \t\r\n".contains($0) }),
                     "a host with a delimiter in it from \(text.debugDescription)")
        precondition(reading.port.map { (1...65535).contains($0) } ?? true, "a port out of range from \(text.debugDescription)")
        precondition(userInfo == .userOnly || reading.user == nil, "a user kept where the door refuses it")
        let again = try? URLReading(reading.origin + reading.rest)
        precondition(again?.host == reading.host && again?.port == reading.port && again?.scheme == reading.scheme,
                     "the reading of \(text.debugDescription) does not read back as itself")
        if let url = reading.url {
            precondition((try? URLReading(url.absoluteString))?.host == reading.host,
                         "Foundation reads another host in the spelling of \(text.debugDescription)")
        }
    }
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
        _ = try sender.remove(user: "user2", for: ProtectionSpace(host: "host2.example.com", port: 443, protocol: "https", realm: "realm"),
                              options: [.removeSynchronizable])
        try storage.sync.trust(try sender.sync.deviceKey)
        var seeds: [[UInt8]] = []
        let seed = directory.appendingPathComponent("seed.csbundle")
        try sender.sync.export(to: seed, protection: .recipients([try storage.sync.deviceKey]))
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
        _ = try? storage.sync.importBundle(from: input, dryRun: true)
        precondition((try? storage.entries().count) == before, "a dry-run import changed the store")
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
}

/// netrc files: whatever parses must hold together (each entry complete, lines in order), render
/// back to one line per machine (and one `# credstore:` comment line above it when it has a
/// space, of its own host), and parse back from that rendering to the same machines and spaces;
/// an entry the store's rules accept carries no line break.
func fuzzNetrc(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let parsed = try? Netrc.parse(text) else { return }
    precondition(parsed.machines.count == parsed.lines.count, "a machine without its line")
    precondition(zip(parsed.lines, parsed.lines.dropFirst()).allSatisfy { $0 <= $1 } && parsed.lines.allSatisfy { $0 >= 1 },
                 "entry lines out of order")
    precondition(parsed.machines.allSatisfy { !$0.host.isEmpty && !$0.login.isEmpty }, "an incomplete machine was kept")
    precondition(parsed.skipped.allSatisfy { !$0.reason.isEmpty && $0.line >= 1 }, "a skipped entry without its reason or line")
    for machine in parsed.machines {
        let line = Netrc.render([machine])
        precondition(line.utf8.filter { $0 == 0x0A }.count == (machine.space == nil ? 1 : 2) && line.utf8.last == 0x0A,
                     "a machine rendered to more than one line: \(line.debugDescription)")
        precondition(machine.space.map { $0.host == ProtectionSpace(host: machine.host, port: 0, protocol: "https", realm: nil).host } ?? true,
                     "a comment line gave a machine another host's space")
        let space = machine.space ?? ProtectionSpace(host: machine.host, port: 0, protocol: "https", realm: nil)
        let credential = Credential(user: machine.login, password: machine.password, persistence: .permanent)
        if (try? credential.validate(in: space)) != nil {
            precondition(FieldRules.isLineSafe(machine.login) && FieldRules.isLineSafe(machine.password) && FieldRules.isLineSafe(space.host),
                         "a line-breaking entry passed validation")
        }
    }
    let again = try? Netrc.parse(Netrc.render(parsed.machines))
    precondition(again?.machines == parsed.machines && again?.skipped.isEmpty == true,
                 "netrc render/parse is not a round trip for \(text.debugDescription)")
}

/// git-credential requests: the lines as the helper reads them (up to a blank line, UTF-8). The
/// space must pass or fail validation without trapping; the answer for any credential is the
/// expected lines or a refusal, never a line-breaking value; the companion encoding of expiry
/// and refresh token is line-free and round-trips.
func fuzzGitCredential(_ bytes: [UInt8]) {
    var lines: [String] = []
    for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
        if line.isEmpty { break }
        guard let text = String(validating: line, as: UTF8.self) else { return }
        lines.append(text)
    }
    let request = GitCredentialRequest.parse(lines)
    _ = request.realm
    if let space = request.space {
        _ = try? space.validate()
    }
    let credential = Credential(
        user: request.username ?? "user", password: request.password ?? "pw", persistence: .permanent,
        expires: request.passwordExpiry.map { Date(timeIntervalSince1970: Double($0)) }, refreshToken: request.refreshToken)
    // Before and after the expiry: the answer is whole lines, a password only while it is valid.
    for now in [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 4_102_444_800)] {
        guard let answer = try? GitCredentialRequest.answer(credential, now: now) else { continue }
        let expired = credential.isExpired(at: now)
        let expected = answer.isEmpty ? 0 : 1 + (expired ? 0 : 1) + (expired || credential.expires == nil ? 0 : 1) + (credential.refreshToken == nil ? 0 : 1)
        precondition(answer.utf8.filter { $0 == 0x0A }.count == expected && (answer.isEmpty || answer.hasSuffix("\n"))
                     && !answer.utf8.contains(0x0D) && !answer.utf8.contains(0),
                     "the git answer breaks its lines: \(answer.debugDescription)")
        precondition(!expired || !answer.contains("password="), "an expired password went to git")
    }
}

/// Another store's file for `credstore import --from FORMAT`, one target per format: CSV that
/// parses renders back (every field quoted) and parses to the same records; the file reader
/// decodes bytes as strict UTF-8 does; the format's reader either refuses the file
/// or returns rows in file order, each with a space or a reason to skip it, never trapping.
func fuzzImport(_ bytes: [UInt8], format: ImportFormat) {
    let text = String(decoding: bytes, as: UTF8.self)
    if let records = try? CSV.records(text) {
        precondition(zip(records, records.dropFirst()).allSatisfy { $0.line < $1.line } && records.allSatisfy { $0.line >= 1 },
                     "CSV records out of order")
        let rendered = records.map { record in
            record.fields.map { "\"" + $0.replacingEvery("\"", with: "\"\"") + "\"" }.joined(separator: ",") + "\r\n"
        }.joined()
        precondition((try? CSV.records(rendered))?.map(\.fields) == records.map(\.fields),
                     "CSV render/parse is not a round trip for \(text.debugDescription)")
    }
    // The file reader's decoding: the raw bytes (UTF-8 or not) give the scalars the standard
    // library's strict decoding gives, or are refused where that finds an error.
    var stream = ScalarStream(bytes: bytes, name: "the file")
    var streamed = String.UnicodeScalarView()
    let strict = String(validating: bytes, as: UTF8.self)
    do {
        while let scalar = try stream.nextScalar() { streamed.append(scalar) }
        precondition(strict.map { String(streamed) == $0 } ?? false, "the stream read bytes the strict decoding refuses")
    } catch {
        precondition(strict == nil, "the stream refused UTF-8 text")
    }
    guard let rows = try? ForeignImport.rows(text, format: format) else { return }
    precondition(zip(rows, rows.dropFirst()).allSatisfy { $0.line <= $1.line }, "\(format) rows out of order")
    precondition(rows.allSatisfy { ($0.space != nil) != ($0.skipped != nil) }, "a \(format) row with neither a space nor a reason")
    for row in rows {
        if let space = row.space { _ = try? Credential(user: row.user, password: row.password, persistence: .permanent).validate(in: space) }
    }
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
    "https://bank.example.com\\@evil.example.com/login", "https://%65vil.example.com", "https://user:pw@example.com/",
    "https://0x7f.1/", "https://2130706433/", "https://[::ffff:127.0.0.1]/", "https://xn--a.example/",
]

let netrcSeeds: [String] = [
    "machine api.example.com login alice password \"pass word\\\"q\"\n",
    "# comment\r\nmachine a.example.com login x password y\r\ndefault login anonymous password guest\r\n",
    "machine h\n  login u\n  account a\n  password \"\\n\\r\\t\\\\\"\nmacdef init\ncd /pub\n\nmachine b login c password d\n",
    #"machine evil.example.com login alice password "pw\nhost=github.com\nusername=mallory\npassword=planted""#,
    "machine nopassword.example.com login dave\nmachine \"#odd\" login \"\" password \"\"\n",
    "# credstore: http://127.0.0.1:8080\nmachine 127.0.0.1 login a password b\n# credstore: https://[::1] realm \"R \\\"q\\\"\" method basic\r\n"
        + "machine ::1 login c password d\n# credstore: http://other.example.com\nmachine x.example.com login e password f\n",
]

let gitCredentialSeeds: [String] = [
    "protocol=https\nhost=github.com\nusername=alice\npassword=s3cret\n\n",
    "protocol=https\nhost=git.example.com:8443\npath=team/app.git\npassword_expiry_utc=4102444800\noauth_refresh_token=gho_a&b=c%d\n\n",
    "protocol=http\nhost=[::1]:8080\nwwwauth[]=Basic realm=\"Area A\", charset=\"UTF-8\"\nwwwauth[]=\nwwwauth[]=Digest realm=\"r\", nonce=\"n\"\ncapability[]=authtype\n",
    "protocol=https\nhost=evil.example.com\nusername=a\rquit=1\npassword=p\u{0}x\n",
]

let importSeeds: [ImportFormat: String] = [
    .gitCredentials: "https://al%20ice%40corp:p%40ss%3aw%2frd%25%c3%bc@git.example.com\nhttps://bob:s3cret@git.example.com%3a8443/team/repo.git\nsmtp://c:x@mail.example.com\n",
    .keepassxc: "\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\"\n\"Root\",\"GitHub\",\"alice\",\"gh, \"\"q\"\"\",\"https://github.com/login\",\"a\nb\"\n",
    .bitwarden: "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n,,login,Mail,,,0,\"https://a.example,https://b.example:444/x\",u,p,\n,,note,N,text,,0,,,,\n",
    .chrome: "\u{FEFF}name,url,username,password,note\r\nexample.com,https://example.com/,alice,\"comma, pass\",\"two\r\nlines\"\r\napp,android://h@com.x/,u,p,\r\n",
]

/// The target named `name` and its seeds; the bundle target opens its store on first use.
func fuzzTarget(named name: String) throws -> (run: ([UInt8]) -> Void, seeds: [[UInt8]])? {
    switch name {
    case "challenge": return (fuzzChallenge, challengeSeeds.map { Array($0.utf8) })
    case "url": return (fuzzURL, urlSeeds.map { Array($0.utf8) })
    case "netrc": return (fuzzNetrc, netrcSeeds.map { Array($0.utf8) })
    case "git-credential": return (fuzzGitCredential, gitCredentialSeeds.map { Array($0.utf8) })
    case let name where name.hasPrefix("import-"):
        // Its own format's seed first, the others as material to splice in.
        guard let format = ImportFormat(rawValue: String(name.dropFirst("import-".count))), let own = importSeeds[format] else { return nil }
        let seeds = [own] + importSeeds.filter { $0.key != format }.map(\.value).sorted()
        return ({ fuzzImport($0, format: format) }, seeds.map { Array($0.utf8) })
    case "bundle":
        let target = try BundleTarget()
        return (target.run, target.seeds)
    default: return nil
    }
}
