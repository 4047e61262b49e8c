public import CredentialStore
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

extension CredentialStorageError.Code {
    /// An https request through a proxy was refused by the proxy's `CONNECT` (typically its 407):
    /// libcurl, under corelibs' URLSession, reports it as a transport error and sends no request
    /// header to the proxy, so the bridge cannot answer it from the store.
    public static let proxyTunnelRefused = CredentialStorageError.Code(rawValue: "proxyTunnelRefused")
}

extension URLSession {
    /// The most redirects one call follows, as corelibs' own limit.
    static let maximumRedirects = 16

    /// Performs `request`, answering one 401 (or 407) challenge per origin with the default
    /// credential that `storage` holds for it.
    ///
    /// On Linux URLSession's own challenge path finds nothing in a store (corelibs compares
    /// protection spaces by identity), so this does the work: on a 401/407 it asks a
    /// ``CredentialChallengeResponder`` and retries once with the `Authorization` (or
    /// `Proxy-Authorization`) header; a proxy's 407 and then the origin's 401 are each answered
    /// once. A second challenge of a kind already answered is returned as it is: a stored
    /// credential that failed is never sent again in a loop.
    ///
    /// Redirects are followed here, not by URLSession, so that credentials never leave their
    /// origin: on every hop to another scheme, host or port (https to http included, and back
    /// again on an A→B→A bounce) `Authorization`, `Proxy-Authorization` and `Cookie` are dropped
    /// from the request, whoever set them. 301/302 turn a POST into a GET and 303 anything but
    /// HEAD, without the body; 307/308 keep method and body. At most 16 redirects are followed;
    /// the last redirect response is returned after that, as for a `Location` that is not http(s)
    /// and for a 307/308 of a request whose body is a stream.
    ///
    /// A 407 is answered only when the request really went through that proxy: `proxy`, or the
    /// proxy libcurl takes from the environment for the URL (lowercase `http_proxy` for http, as
    /// libcurl ignores `HTTP_PROXY`; `https_proxy`/`HTTPS_PROXY` for https; `all_proxy`;
    /// `no_proxy`), and never for https, where the proxy is a `CONNECT` tunnel and any 407 seen
    /// comes from the origin. The tunnel's own 407 cannot be answered (libcurl sends no request
    /// header to the proxy): it throws `CredentialStore.CredentialStorageError.Code.proxyTunnelRefused`.
    ///
    /// The request is not answered, and the challenge response is returned, when the store has
    /// nothing for it or when its body is a stream that cannot be sent twice.
    ///
    /// The requests run in a short-lived session with this session's configuration (not its
    /// delegate): corelibs hands a 401 that offers Basic to the session delegate and, without one,
    /// leaves the task suspended forever; this call's own delegate takes the challenge and returns
    /// the 401 response instead, with an empty body (corelibs does not expose it). A 401 that
    /// offers Digest without Basic never reaches the delegate and keeps its body.
    ///
    /// - Parameters:
    ///   - request: The request to perform.
    ///   - storage: The store whose default credentials answer the challenges.
    ///   - proxy: The proxy the session goes through, needed to answer a 407 for an http URL. When
    ///     `nil`, the environment is read as libcurl reads it.
    ///   - allowsBasicOverPlainHTTP: Answer Basic challenges over plain http (and from a plain http
    ///     proxy), which send the password readable on the wire; off by default, for local
    ///     development only.
    /// - Throws: URLSession's errors, `CredentialStore.CredentialStorageError.Code.proxyTunnelRefused`, and the
    ///   store's integrity errors; never an error caused by a challenge's content.
    public func data(
        for request: URLRequest,
        credentialsFrom storage: CredentialStorage,
        proxy: ProxyEndpoint? = nil,
        allowsBasicOverPlainHTTP: Bool = false
    ) async throws -> (Data, URLResponse) {
        try await answeringChallenges(
            request, credentialsFrom: storage, proxy: proxy, allowsBasicOverPlainHTTP: allowsBasicOverPlainHTTP,
            unanswered: { Data() }, perform: { request, _, session, _ in try await session.data(for: request) })
    }

    /// Uploads `bodyData` with `request`, answering challenges from `storage` as
    /// `URLSession.data(for:credentialsFrom:proxy:allowsBasicOverPlainHTTP:)` does.
    ///
    /// The body is sent again with each answered retry, and after a 307 or 308 redirect; a 301 or
    /// 302 of a POST and a 303 turn the request into a GET without it.
    ///
    /// - Parameters:
    ///   - request: The request; its method is usually `POST` or `PUT`.
    ///   - bodyData: The body to upload.
    ///   - storage: The store whose default credentials answer the challenges.
    ///   - proxy: The proxy the session goes through, needed to answer a 407 for an http URL.
    ///   - allowsBasicOverPlainHTTP: Answer Basic challenges over plain http; off by default.
    /// - Throws: As `URLSession.data(for:credentialsFrom:proxy:allowsBasicOverPlainHTTP:)`.
    public func upload(
        for request: URLRequest,
        from bodyData: Data,
        credentialsFrom storage: CredentialStorage,
        proxy: ProxyEndpoint? = nil,
        allowsBasicOverPlainHTTP: Bool = false
    ) async throws -> (Data, URLResponse) {
        try await answeringChallenges(
            request, credentialsFrom: storage, proxy: proxy, allowsBasicOverPlainHTTP: allowsBasicOverPlainHTTP,
            unanswered: { Data() },
            perform: { request, keepsBody, session, _ in
                keepsBody ? try await session.upload(for: request, from: bodyData) : try await session.data(for: request)
            })
    }

    /// Uploads the file at `fileURL` with `request`, answering challenges from `storage` as
    /// `URLSession.data(for:credentialsFrom:proxy:allowsBasicOverPlainHTTP:)` does.
    ///
    /// The file is read again for each answered retry and after a 307 or 308 redirect; a 301 or
    /// 302 of a POST and a 303 turn the request into a GET without it.
    ///
    /// - Parameters:
    ///   - request: The request; its method is usually `POST` or `PUT`.
    ///   - fileURL: The file whose contents are the body.
    ///   - storage: The store whose default credentials answer the challenges.
    ///   - proxy: The proxy the session goes through, needed to answer a 407 for an http URL.
    ///   - allowsBasicOverPlainHTTP: Answer Basic challenges over plain http; off by default.
    /// - Throws: As `URLSession.data(for:credentialsFrom:proxy:allowsBasicOverPlainHTTP:)`.
    public func upload(
        for request: URLRequest,
        fromFile fileURL: URL,
        credentialsFrom storage: CredentialStorage,
        proxy: ProxyEndpoint? = nil,
        allowsBasicOverPlainHTTP: Bool = false
    ) async throws -> (Data, URLResponse) {
        try await answeringChallenges(
            request, credentialsFrom: storage, proxy: proxy, allowsBasicOverPlainHTTP: allowsBasicOverPlainHTTP,
            unanswered: { Data() },
            perform: { request, keepsBody, session, _ in
                keepsBody ? try await session.upload(for: request, fromFile: fileURL) : try await session.data(for: request)
            })
    }

    /// Downloads `request` to a temporary file, answering challenges from `storage` as
    /// `URLSession.data(for:credentialsFrom:proxy:allowsBasicOverPlainHTTP:)` does.
    ///
    /// The file of a response that was answered or redirected is deleted; the caller owns (and
    /// removes) the file returned. A final Basic 401 left unanswered comes back as an empty file:
    /// corelibs made a challenge of it and keeps its body (any other response has its body).
    ///
    /// - Parameters:
    ///   - request: The request to perform.
    ///   - storage: The store whose default credentials answer the challenges.
    ///   - proxy: The proxy the session goes through, needed to answer a 407 for an http URL.
    ///   - allowsBasicOverPlainHTTP: Answer Basic challenges over plain http; off by default.
    /// - Returns: The downloaded file's location and the final response.
    /// - Throws: As `URLSession.data(for:credentialsFrom:proxy:allowsBasicOverPlainHTTP:)`,
    ///   and file system errors.
    public func download(
        for request: URLRequest,
        credentialsFrom storage: CredentialStorage,
        proxy: ProxyEndpoint? = nil,
        allowsBasicOverPlainHTTP: Bool = false
    ) async throws -> (URL, URLResponse) {
        try await answeringChallenges(
            request, credentialsFrom: storage, proxy: proxy, allowsBasicOverPlainHTTP: allowsBasicOverPlainHTTP,
            unanswered: {
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("credstore-download-\(UUID().uuidString)")
                try Data().write(to: file)
                return file
            },
            perform: { request, _, session, _ in try await session.download(for: request) },
            discard: { try? FileManager.default.removeItem(at: $0) })
    }

    /// Performs `request` and streams the final response's body, answering challenges from
    /// `storage` as `URLSession.data(for:credentialsFrom:proxy:allowsBasicOverPlainHTTP:)` does.
    ///
    /// What `URLSession.bytes(for:)` is on Apple platforms, where corelibs has none: the call
    /// returns once the final response's headers arrived, and its body comes as it is received.
    /// The bodies of answered challenges and redirects are not delivered; a final challenge that
    /// was not answered comes with the body the server sent (corelibs streams it before it raises
    /// the challenge). Ending the iteration early cancels the request.
    ///
    /// ```swift
    /// let (bytes, response) = try await URLSession.shared.bytes(for: request, credentialsFrom: storage)
    /// for try await byte in bytes { … }
    /// ```
    ///
    /// - Parameters:
    ///   - request: The request to perform.
    ///   - storage: The store whose default credentials answer the challenges.
    ///   - proxy: The proxy the session goes through, needed to answer a 407 for an http URL.
    ///   - allowsBasicOverPlainHTTP: Answer Basic challenges over plain http; off by default.
    /// - Returns: The body's bytes, and the final response.
    /// - Throws: As `URLSession.data(for:credentialsFrom:proxy:allowsBasicOverPlainHTTP:)`; an
    ///   error while the body is received ends the iteration with it.
    public func bytes(
        for request: URLRequest,
        credentialsFrom storage: CredentialStorage,
        proxy: ProxyEndpoint? = nil,
        allowsBasicOverPlainHTTP: Bool = false
    ) async throws -> (AsyncThrowingStream<UInt8, any Error>, URLResponse) {
        let (body, response) = try await answeringChallenges(
            request, credentialsFrom: storage, proxy: proxy, allowsBasicOverPlainHTTP: allowsBasicOverPlainHTTP,
            unanswered: { StreamedBody.empty },
            perform: { request, _, session, catcher in try await catcher.stream(request, in: session) },
            discard: { $0.cancel() })
        return (body.bytes, response)
    }

    /// The loop every bridge call runs: perform, follow redirects with the origin checks, answer
    /// each kind of challenge once per origin from the store, and return the final response.
    ///
    /// - Parameters:
    ///   - unanswered: The value to return with a challenge response the catcher took (its body
    ///     is not exposed by corelibs).
    ///   - perform: One request in the short-lived session; `keepsBody` is false once a redirect
    ///     has turned the request into a GET, so that an upload's body is no longer sent.
    ///   - discard: Frees the value of a response that is not returned (a downloaded file).
    private func answeringChallenges<Value>(
        _ request: URLRequest,
        credentialsFrom storage: CredentialStorage,
        proxy: ProxyEndpoint?,
        allowsBasicOverPlainHTTP: Bool,
        unanswered: () throws -> Value,
        perform: (URLRequest, _ keepsBody: Bool, URLSession, ChallengeCatcher) async throws -> (Value, URLResponse),
        discard: (Value) -> Void = { _ in }
    ) async throws -> (Value, URLResponse) {
        let catcher = ChallengeCatcher()
        let session = URLSession(configuration: configuration, delegate: catcher, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let responder = CredentialChallengeResponder(storage: storage, allowsBasicOverPlainHTTP: allowsBasicOverPlainHTTP)

        // Each kind of challenge is answered at most once per origin: a proxy's 407, then the
        // origin's 401 (the proxy's answer is kept on the second retry). A challenge of a kind
        // already answered means the stored credential failed, and its response is returned as it
        // is: never a loop.
        var current = request
        var keepsBody = true
        var answered: Set<String> = []
        var redirects = 0
        while true {
            let (fetched, response) = try await fetch(current, proxy: proxy) {
                try await catcher.fetch { try await perform(current, keepsBody, session, catcher) }
            }
            // The response as the caller gets it; a challenge the catcher took has no body.
            func final() throws -> (Value, URLResponse) { (try fetched ?? unanswered(), response) }
            guard let http = response as? HTTPURLResponse, let url = current.url else { return try final() }
            if let next = Self.redirectTarget(of: http, from: url) {
                // A body stream was read by the first request and cannot be sent again.
                let keepsMethod = http.statusCode == 307 || http.statusCode == 308
                guard redirects < Self.maximumRedirects, !(keepsMethod && current.httpBodyStream != nil) else { return try final() }
                redirects += 1
                let redirected = Self.redirect(current, to: next, status: http.statusCode)
                if redirected.httpMethod != current.httpMethod { keepsBody = false }
                current = redirected
                fetched.map(discard)
                continue
            }
            guard http.statusCode == 401 || http.statusCode == 407, current.httpBodyStream == nil else { return try final() }
            let key = "\(http.statusCode) \(Self.origin(of: url))"
            guard !answered.contains(key) else { return try final() }
            let challengeProxy: ProxyEndpoint?
            if http.statusCode == 407 {
                // Inside a CONNECT tunnel only the origin can answer: its 407 is not the proxy's.
                guard url.scheme?.lowercased() == "http",
                      let through = proxy ?? Self.environmentProxy(for: url) else { return try final() }
                challengeProxy = through
            } else {
                challengeProxy = nil
            }
            guard let response = ChallengeResponse(http) else { return try final() }
            let disposition = try responder.answer(
                to: response, method: current.httpMethod ?? "GET", previousFailureCount: 0, proxy: challengeProxy).disposition
            guard case .useCredential(_, let authorization) = disposition else { return try final() }
            answered.insert(key)
            current.setValue(authorization, forHTTPHeaderField: http.statusCode == 407 ? "Proxy-Authorization" : "Authorization")
            fetched.map(discard)
        }
    }

    /// One request; an https request through a proxy whose tunnel failed says so with a typed error.
    private func fetch<Value>(
        _ request: URLRequest, proxy: ProxyEndpoint?,
        _ operation: () async throws -> (Value?, URLResponse)
    ) async throws -> (Value?, URLResponse) {
        do {
            return try await operation()
        } catch let error as URLError {
            // libcurl's words, the only trace corelibs keeps of the CONNECT response: "CONNECT
            // tunnel failed, response 407".
            let description = (error as NSError).userInfo[NSLocalizedDescriptionKey] as? String ?? ""
            if let url = request.url, url.scheme?.lowercased() == "https",
               let range = description.range(of: "CONNECT tunnel failed, response ") {
                let status = description[range.upperBound...].prefix(while: \.isNumber)
                let through = (proxy ?? Self.environmentProxy(for: url)).map { " \($0.host):\($0.port)" } ?? ""
                throw CredentialStorageError(.proxyTunnelRefused,
                    "the proxy\(through) refused to open a tunnel for the https request (its CONNECT answered \(status)); a proxy that asks for a password on CONNECT cannot be answered from the store, because libcurl sends no request header to the proxy: give the proxy's user and password in https_proxy, or reach the origin without that proxy")
            }
            throw error
        }
    }

    /// The URL a 301, 302, 303, 307 or 308 response sends to, if it is http or https.
    static func redirectTarget(of response: HTTPURLResponse, from url: URL) -> URL? {
        guard [301, 302, 303, 307, 308].contains(response.statusCode),
              let location = response.value(forHTTPHeaderField: "Location"),
              let target = URL(string: location, relativeTo: url)?.absoluteURL,
              let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https",
              target.host?.isEmpty == false
        else { return nil }
        return target
    }

    /// The request a redirect asks for: the method and body per RFC 9110 §15.4 as libcurl does it,
    /// and no credential of any kind when the target is another origin.
    static func redirect(_ request: URLRequest, to target: URL, status: Int) -> URLRequest {
        var next = request
        next.url = target
        let method = request.httpMethod?.uppercased() ?? "GET"
        if (status == 303 && method != "HEAD") || ((status == 301 || status == 302) && method == "POST") {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.httpBodyStream = nil
            next.setValue(nil, forHTTPHeaderField: "Content-Type")
            next.setValue(nil, forHTTPHeaderField: "Content-Length")
        }
        if let from = request.url, origin(of: from) != origin(of: target) {
            for name in ["Authorization", "Proxy-Authorization", "Cookie"] {
                next.setValue(nil, forHTTPHeaderField: name)
            }
        }
        return next
    }

    /// Scheme, host and port (the scheme's default when absent), lowercased: what "same origin" compares.
    static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : 0)
        return "\(scheme)://\((url.host ?? "").lowercased()):\(port)"
    }

    /// The proxy libcurl 7.x (and so corelibs) uses for `url`, read from the environment by
    /// libcurl's rules; `nil` when the request goes direct.
    static func environmentProxy(
        for url: URL, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> ProxyEndpoint? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        func variable(_ name: String, uppercaseToo: Bool = true) -> String? {
            if let value = environment[name], !value.isEmpty { return value }
            if uppercaseToo, let value = environment[name.uppercased()], !value.isEmpty { return value }
            return nil
        }
        if let noProxy = variable("no_proxy"), Self.noProxy(noProxy, matches: host) { return nil }
        // libcurl never reads HTTP_PROXY: under CGI it is set from a request's Proxy: header (httpoxy).
        let value = variable("\(scheme)_proxy", uppercaseToo: scheme != "http") ?? variable("all_proxy")
        guard let value else { return nil }
        let text = value.contains("://") ? value : "http://" + value
        // Read as every URL that names a space is: a proxy whose host a browser would read
        // otherwise (a backslash, a percent-encoded host) is no proxy space at all.
        guard let proxyURL = try? URLReading(text, userInfo: .discarded) else { return nil }
        let proxyHost = proxyURL.host
        let proxyScheme = proxyURL.scheme
        let type: ProxyType = proxyScheme.hasPrefix("socks") ? .socks : proxyScheme == "https" ? .https : .http
        // libcurl's default proxy port is 1080, 443 for an https proxy.
        let port = proxyURL.port ?? (proxyScheme == "https" ? 443 : 1080)
        return ProxyEndpoint(host: proxyHost, port: port, type: type)
    }

    /// libcurl's `no_proxy` match: `*` alone matches everything; otherwise each comma-separated
    /// entry (a leading dot ignored, case-insensitive, ports ignored) matches the host itself and
    /// its subdomains; an IPv4 entry with a `/bits` suffix matches that network.
    static func noProxy(_ list: String, matches host: String) -> Bool {
        let host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let trimmedHost = host.hasSuffix(".") ? String(host.dropLast()) : host
        for rawEntry in list.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            var entry = rawEntry.lowercased()
            if entry == "*" { return true }
            if entry.hasPrefix(".") { entry.removeFirst() }
            if entry.hasSuffix(".") { entry.removeLast() }
            if entry.hasPrefix("[") && entry.hasSuffix("]") { entry = String(entry.dropFirst().dropLast()) }
            if entry.isEmpty { continue }
            if let slash = entry.firstIndex(of: "/") {
                if let network = ipv4(String(entry[..<slash])), let bits = Int(entry[entry.index(after: slash)...]),
                   (0...32).contains(bits), let address = ipv4(trimmedHost) {
                    let mask: UInt32 = bits == 0 ? 0 : ~UInt32(0) << UInt32(32 - bits)
                    if address & mask == network & mask { return true }
                }
                continue
            }
            if trimmedHost == entry || trimmedHost.hasSuffix("." + entry) { return true }
        }
        return false
    }

    private static func ipv4(_ text: String) -> UInt32? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard let byte = UInt8(part) else { return nil }
            value = value << 8 | UInt32(byte)
        }
        return value
    }
}
