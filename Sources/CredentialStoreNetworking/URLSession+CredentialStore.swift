public import CredentialStore
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
import Synchronization

extension URLSession {
    /// Performs `request`, answering one 401 (or 407) challenge with the default credential that
    /// `storage` holds for it.
    ///
    /// On Linux URLSession's own challenge path finds nothing in a store (corelibs compares
    /// protection spaces by identity), so this does the work: on a 401/407 it asks a
    /// ``CredentialChallengeResponder`` and retries once with the `Authorization` (or
    /// `Proxy-Authorization`) header; a proxy's 407 and then the origin's 401 are each answered
    /// once. A second challenge of a kind already answered is returned as it is: a stored
    /// credential that failed is never sent again in a loop.
    ///
    /// The request is not answered, and the challenge response is returned, when the store has
    /// nothing for it, when it was redirected to another origin (a credential for one host is never
    /// sent to another), or when its body is a stream that cannot be sent twice.
    ///
    /// The requests run in a short-lived session with this session's configuration (not its
    /// delegate): corelibs hands every 401 that carries a challenge to the session delegate and,
    /// without one, leaves the task suspended forever; this call's own delegate takes the challenge
    /// and returns the 401 response instead, with an empty body (corelibs does not expose it).
    ///
    /// - Parameters:
    ///   - proxy: The proxy the session goes through, needed to answer a 407. When `nil`, the
    ///     `https_proxy` / `http_proxy` environment variables (which corelibs honours) are read.
    public func data(
        for request: URLRequest,
        credentialsFrom storage: CredentialStorage,
        proxy: (host: String, port: Int, type: ProxyType)? = nil
    ) async throws -> (Data, URLResponse) {
        let catcher = ChallengeCatcher()
        let session = URLSession(configuration: configuration, delegate: catcher, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }

        // Each kind of challenge is answered at most once: a proxy's 407, then the origin's 401
        // (the proxy's answer is kept on the second retry). A challenge of a kind already answered
        // means the stored credential failed, and its response is returned as it is: never a loop.
        var current = request
        var answered: Set<Int> = []
        var (data, response) = try await catcher.fetch(current, in: session)
        while let http = response as? HTTPURLResponse,
              http.statusCode == 401 || http.statusCode == 407,
              !answered.contains(http.statusCode),
              let url = request.url,
              request.httpBodyStream == nil,
              Self.sameOrigin(http.url ?? url, url) {
            let headers = http.allHeaderFields.compactMap { name, value -> (name: String, value: String)? in
                guard let name = name as? String, let value = value as? String else { return nil }
                return (name, value)
            }
            let responder = CredentialChallengeResponder(storage: storage)
            let disposition = try responder.respond(
                to: url, method: request.httpMethod ?? "GET", status: http.statusCode, headers: headers,
                previousFailureCount: 0, proxy: proxy ?? Self.environmentProxy(for: url))
            guard case .useCredential(_, let authorization) = disposition else { break }
            answered.insert(http.statusCode)
            current.setValue(authorization, forHTTPHeaderField: http.statusCode == 407 ? "Proxy-Authorization" : "Authorization")
            (data, response) = try await catcher.fetch(current, in: session)
        }
        return (data, response)
    }

    private static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
        lhs.scheme?.lowercased() == rhs.scheme?.lowercased()
            && lhs.host?.lowercased() == rhs.host?.lowercased()
            && lhs.port == rhs.port
    }

    /// The proxy libcurl (and so corelibs) uses for `url`, read from the usual environment variables.
    private static func environmentProxy(for url: URL) -> (host: String, port: Int, type: ProxyType)? {
        let environment = ProcessInfo.processInfo.environment
        let names = url.scheme?.lowercased() == "https" ? ["https_proxy", "HTTPS_PROXY"] : ["http_proxy", "HTTP_PROXY"]
        guard let value = names.lazy.compactMap({ environment[$0] }).first(where: { !$0.isEmpty }) else { return nil }
        let text = value.contains("://") ? value : "http://" + value
        guard let proxyURL = URL(string: text), let host = proxyURL.host else { return nil }
        let type: ProxyType = proxyURL.scheme?.lowercased().hasPrefix("socks") == true ? .socks
            : proxyURL.scheme?.lowercased() == "https" ? .https : .http
        return (host, proxyURL.port ?? 0, type)
    }
}

/// Takes a session's HTTP authentication challenges and gives the challenge response back to the
/// caller, who answers it from the store; other challenges (server trust, client certificates)
/// get the system's default handling.
private final class ChallengeCatcher: NSObject, URLSessionTaskDelegate, Sendable {
    /// The 401 of the request in flight; one request runs at a time per catcher.
    private let caught = Mutex<HTTPURLResponse?>(nil)

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let method = challenge.protectionSpace.authenticationMethod
        guard method != AuthenticationMethod.serverTrust.rawValue, method != AuthenticationMethod.clientCertificate.rawValue,
              let response = challenge.failureResponse as? HTTPURLResponse
        else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        caught.withLock { $0 = response }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    /// Runs `request`; a challenge this catcher cancelled comes back as its response.
    func fetch(_ request: URLRequest, in session: URLSession) async throws -> (Data, URLResponse) {
        caught.withLock { $0 = nil }
        do {
            return try await session.data(for: request)
        } catch {
            guard let response = caught.withLock({ $0 }) else { throw error }
            return (Data(), response)
        }
    }
}
