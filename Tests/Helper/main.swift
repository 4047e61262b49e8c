// A second process for the cross-process tests: it opens the same store as the test and writes.
//
//   credstore-test-helper set DB KEYFILE HOST USER [PERSISTENCE]   password read from stdin
//   credstore-test-helper remove DB KEYFILE HOST USER
//   credstore-test-helper fill DB KEYFILE PREFIX COUNT             sets PREFIX-0 … PREFIX-(COUNT-1)
//   credstore-test-helper import DB KEYFILE BUNDLE                 imports a recipient-mode sync bundle
//   credstore-test-helper fetch DB KEYFILE URL                     GETs URL with credentials from the store
//                                                                  (through $http_proxy if set); prints the
//                                                                  status and Server header on one line,
//                                                                  then the body
//     options after URL: --allow-basic-over-http   answer Basic over plain http (local development opt-in)
//                        --method M --body B       send B with method M
//   an error from the fetch is printed as "error CODE" on stdout (exit 0), so a test can check its code
import CredentialStore
import CredentialStoreNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count >= 5 else { fail("usage: credstore-test-helper set|remove|fill|import|fetch DB KEYFILE …") }
let storage: CredentialStorage
do {
    storage = try CredentialStorage(at: URL(fileURLWithPath: arguments[2]), key: .keyFile(URL(fileURLWithPath: arguments[3])))
} catch {
    fail("open: \(error)")
}

do {
    switch arguments[1] {
    case "set" where arguments.count >= 6:
        let password = readLine(strippingNewline: true) ?? ""
        let persistence = arguments.count > 6 ? Persistence(rawValue: arguments[6]) ?? .permanent : .permanent
        let space = ProtectionSpace(host: arguments[4], port: 443, protocol: "https", realm: nil)
        try storage.set(Credential(user: arguments[5], password: password, persistence: persistence), for: space)
    case "remove" where arguments.count >= 6:
        let space = ProtectionSpace(host: arguments[4], port: 443, protocol: "https", realm: nil)
        try storage.remove(user: arguments[5], for: space)
    case "fill" where arguments.count >= 6:
        guard let count = Int(arguments[5]) else { fail("COUNT must be a number") }
        for index in 0..<count {
            let space = ProtectionSpace(host: "\(arguments[4])-\(index).example.com", port: 443, protocol: "https", realm: nil)
            try storage.set(Credential(user: "user", password: "pw-\(arguments[4])-\(index)", persistence: .permanent), for: space)
        }
    case "import":
        // Says when it starts merging, so a test can time a kill against the import itself.
        FileHandle.standardOutput.write(Data("importing\n".utf8))
        let report = try storage.sync.importBundle(from: URL(fileURLWithPath: arguments[4]))
        FileHandle.standardOutput.write(Data("imported \(report.added) \(report.updated) \(report.removed) \(report.unchanged)\n".utf8))
    case "fetch":
        guard let url = URL(string: arguments[4]) else { fail("not a URL: \(arguments[4])") }
        // Top-level await: blocking the main thread on a semaphore instead would starve corelibs'
        // URLSession, which delivers some of its callbacks there.
        var request = URLRequest(url: url)
        var allowsBasic = false
        var options = arguments.dropFirst(5).makeIterator()
        while let option = options.next() {
            switch option {
            case "--allow-basic-over-http": allowsBasic = true
            case "--method": request.httpMethod = options.next()
            case "--body": request.httpBody = options.next().map { Data($0.utf8) }
            default: fail("unknown option \(option)")
            }
        }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await URLSession.shared.data(for: request, credentialsFrom: storage,
                                                                allowsBasicOverPlainHTTP: allowsBasic)
        } catch let error as CredentialStorageError {
            FileHandle.standardOutput.write(Data("error \(error.code)\n".utf8))
            exit(0)
        }
        let http = response as? HTTPURLResponse
        let server = http?.value(forHTTPHeaderField: "Server") ?? ""
        FileHandle.standardOutput.write(Data("\(http?.statusCode ?? 0) \(server)\n".utf8) + data)
    default:
        fail("unknown command \(arguments[1])")
    }
} catch {
    fail("\(arguments[1]): \(error)")
}

