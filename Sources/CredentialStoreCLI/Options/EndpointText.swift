import CredentialStore

/// `HOST` or `HOST:PORT` (`[V6]:PORT`), as `pin` and `--from-server` take a server.
struct EndpointText {
    var host: String
    var port: Int?

    init(_ text: String) throws {
        // Repeated in a message only when nothing in it can be a password (`user:pw@host`).
        let shown = text.contains("@") ? "the server" : String(reflecting: text)
        // By Unicode scalars, as every reader of a host is (URLReading): a delimiter followed by
        // a combining mark is one Character, which equals no delimiter.
        var host = Substring(text).unicodeScalars
        var port: Int?
        if host.first == "[" {
            guard let close = host.firstIndex(of: "]") else { throw CommandFailure(.dataError, "\(shown) is not HOST or HOST:PORT") }
            let rest = host[host.index(after: close)...]
            if rest.first == ":" {
                port = Int(Substring(rest.dropFirst()))
                guard port != nil else { throw CommandFailure(.dataError, "\(shown) has no port number after the colon") }
            } else if !rest.isEmpty {
                throw CommandFailure(.dataError, "\(shown) is not HOST or HOST:PORT")
            }
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":"), host.firstIndex(of: ":") == colon {
            port = Int(Substring(host[host.index(after: colon)...]))
            guard port != nil else { throw CommandFailure(.dataError, "\(shown) has no port number after the colon") }
            host = host[..<colon]
        }
        guard !host.isEmpty, port.map({ (1...65535).contains($0) }) ?? true else {
            throw CommandFailure(.dataError, "\(shown) is not HOST or HOST:PORT")
        }
        // Read as every host that names a server is (URLReading): one a browser or curl would
        // take for another host (a backslash, percent escapes, 0x7f.1) is refused.
        let name = String(Substring(host))
        _ = try URLReading.host(name)
        try ProtectionSpace(host: name, port: port ?? 443, protocol: "https", realm: nil).validate()
        self.host = name
        self.port = port
    }

    var endpoint: TLSEndpoint { TLSEndpoint(host: host, port: port) }
}
