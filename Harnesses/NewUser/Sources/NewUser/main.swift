// What a new user writes in their first hour: store a password for a site and one for a proxy,
// both without a realm, hand the store's delegate to URLSession, and fetch.
//
//     NewUser STORE_FOLDER ORIGIN_URL [PROXY_HOST:PORT]  < passwords
//
// Standard input holds `user:password` for the origin, then (with a proxy) for the proxy: no
// secret in argv. Without a proxy it fetches ORIGIN/basic/file.txt with URLSession itself (the
// delegate answers Basic) and ORIGIN/digest/file.txt through the bridge on the same session
// (corelibs hands a delegate no Digest challenge); with one, ORIGIN/basic/file.txt through the
// bridge, which answers the proxy's 407 and then the origin's 401 (corelibs hands a delegate no 407). Each
// fetch prints `PATH STATUS BODY`.
import CredentialStoreNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

let arguments = CommandLine.arguments
guard arguments.count == 3 || arguments.count == 4, let origin = URL(string: arguments[2]) else {
    FileHandle.standardError.write(Data("usage: NewUser STORE_FOLDER ORIGIN_URL [PROXY_HOST:PORT] < passwords\n".utf8))
    exit(64)
}
let folder = URL(fileURLWithPath: arguments[1], isDirectory: true)
func readCredential() -> Credential {
    let line = readLine() ?? ""
    let parts = line.split(separator: ":", maxSplits: 1).map(String.init)
    return Credential(user: parts.first ?? "", password: parts.count > 1 ? parts[1] : "", persistence: .permanent)
}

let storage = try CredentialStorage(
    at: StoreLocation(databaseURL: folder.appendingPathComponent("credentials.db")),
    options: StorageOptions(rollbackAnchor: .directory(folder.appendingPathComponent("anchors"))))
// As `credstore add ORIGIN --user alice` stores it: the origin, no realm, any method.
try storage.set(readCredential(), for: try ProtectionSpace(url: origin))

var proxy: ProxyEndpoint?
if arguments.count == 4, let colon = arguments[3].lastIndex(of: ":"), let port = Int(arguments[3][arguments[3].index(after: colon)...]) {
    proxy = ProxyEndpoint(host: String(arguments[3][..<colon]), port: port, type: .http)
    // As `credstore add … --proxy http --user proxyuser` stores it: no realm either.
    try storage.set(readCredential(), for: ProtectionSpace(proxy: ProxyEndpoint(host: proxy!.host, port: port, type: .http), realm: nil))
}

// Both servers are plain http on loopback, so Basic needs the opt-in.
let credentials = CredentialStoreSessionDelegate(storage: storage, allowsBasicOverPlainHTTP: true)
let session = URLSession(configuration: .ephemeral, delegate: credentials, delegateQueue: nil)

func show(_ path: String, _ result: (Data, URLResponse)) {
    let status = (result.1 as? HTTPURLResponse)?.statusCode ?? 0
    let body = String(decoding: result.0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    print(path, status, body)
}

let basic = URLRequest(url: origin.appendingPathComponent("basic/file.txt"))
if proxy == nil {
    show("/basic/file.txt", try await session.data(for: basic))
    show("/digest/file.txt", try await session.data(
        for: URLRequest(url: origin.appendingPathComponent("digest/file.txt")), credentialsFrom: storage, allowsBasicOverPlainHTTP: true))
} else {
    show("/basic/file.txt", try await session.data(for: basic, credentialsFrom: storage, proxy: proxy, allowsBasicOverPlainHTTP: true))
}
session.finishTasksAndInvalidate()
