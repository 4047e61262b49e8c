public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A response that may carry a challenge, as ``CredentialChallengeResponder/answer(to:method:previousFailureCount:proxy:)``
/// reads it: the URL the request went to, the status, and the headers.
///
/// Made from an `HTTPURLResponse`, or from its parts for a client that is not URLSession's.
public struct ChallengeResponse: Sendable {
    /// The URL the request went to; nil for an `HTTPURLResponse` without one, which is answered
    /// with ``CredentialChallengeResponder/Disposition/performDefaultHandling``.
    public let url: URL?
    /// The response status; only 401 and 407 carry challenges.
    public let status: Int
    /// The response headers: the `WWW-Authenticate` or `Proxy-Authenticate` values are read,
    /// whatever the case of their names, in order.
    public let headers: [(name: String, value: String)]

    /// A response to a request for `url`, with `status` and `headers`.
    public init(url: URL, status: Int, headers: [(name: String, value: String)]) {
        self.url = url
        self.status = status
        self.headers = headers
    }

    /// The response `response` is: its URL, status code and header fields.
    public init(_ response: HTTPURLResponse) {
        url = response.url
        status = response.statusCode
        headers = response.allHeaderFields.compactMap { name, value -> (name: String, value: String)? in
            guard let name = name as? String, let value = value as? String else { return nil }
            return (name, value)
        }
    }
}
