import CredentialStore
import CredentialStoreFormats
import Foundation

/// A protection space as the command line names it: a URL, and maybe a realm, method, proxy type.
struct SpaceRequest: Equatable {
    var url: String
    var realm: String?
    var method: MethodName?
    var proxy: ProxyName?

    /// Whether the options name one exact space rather than a request URL to match.
    var isExact: Bool { method != nil || proxy != nil }

    /// The URL and the options given, as a command line takes them again (each word quoted for
    /// the shell where it needs to be): what advice to run `credstore add` names, so that the
    /// credential it adds is the one the failed command looked for.
    var arguments: String {
        var words = [url]
        if let realm { words += ["--realm", realm] }
        if let method { words += ["--method", method.rawValue] }
        if let proxy { words += ["--proxy", proxy.rawValue] }
        return ShellWords.joined(words)
    }

    /// The URL, read as every door of credstore reads one (`URLReading`): a scheme, a host
    /// that a browser would read the same way, and no user name or password.
    ///
    /// - Throws: `invalidInput` (65) with the reason; a URL cannot be fixed by other flags.
    func reading() throws -> URLReading {
        do {
            return try URLReading(url)
        } catch let error as CredentialStorageError where error.message == URLReading.notAURL {
            // Its words are repeated only when no secret can be among them (nothing before an @).
            guard !url.contains("@") else { throw error }
            // A bare host name most likely wants the https scheme in front.
            let bare = !url.contains("://") && !url.isEmpty && !url.contains(where: { $0.isWhitespace || $0 == "/" })
            let example = bare ? "https://\(url)" : "https://api.example.com"
            throw CredentialStorageError(.invalidInput, "\(String(reflecting: url)) is not a URL with a host; give a URL such as \(example)")
        }
    }

    /// The URL as ``reading()`` reads it, spelled for Foundation.
    func parsedURL() throws -> URL {
        guard let url = try reading().url else {
            throw CredentialStorageError(.invalidInput, URLReading.notAURL)
        }
        return url
    }

    /// The exact space the options name.
    func protectionSpace() throws -> ProtectionSpace {
        let parsed = try reading()
        if let proxy {
            let space = ProtectionSpace(proxy: ProxyEndpoint(host: parsed.host, port: parsed.spacePort, type: proxy.proxyType),
                                        realm: realm, authenticationMethod: method?.authenticationMethod)
            try space.validate()
            return space
        }
        let space = ProtectionSpace(host: parsed.host, port: parsed.spacePort, protocol: parsed.scheme,
                                    realm: realm, authenticationMethod: method?.authenticationMethod)
        try space.validate()
        return space
    }
}
