public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A response that may carry a challenge, as ``CredentialChallengeResponder/answer(to:method:previousFailureCount:proxy:)``
/// reads it: the URL the request went to, the status, and the headers.
///
/// Made from an `HTTPURLResponse`, or from its parts for a client that is not URLSession's.
public struct ChallengeResponse: Hashable, Sendable {
    /// One response header.
    public struct Header: Hashable, Sendable {
        /// Its name, in any case.
        public var name: String
        /// Its value.
        public var value: String

        /// A header `name: value`.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The URL the request went to.
    public let url: URL
    /// The response status; only 401 and 407 carry challenges.
    public let status: Int
    /// The response headers: the `WWW-Authenticate` or `Proxy-Authenticate` values are read,
    /// whatever the case of their names, in order.
    public let headers: [Header]

    /// A response to a request for `url`, with `status` and `headers` as name and value pairs
    /// (as `ProtectionSpace.spaces(for:status:headers:proxy:)` takes them).
    public init(url: URL, status: Int, headers: [(name: String, value: String)]) {
        self.url = url
        self.status = status
        self.headers = headers.map { Header(name: $0.name, value: $0.value) }
    }

    /// The response `response` is: its URL, status code and header fields; nil for a response
    /// without a URL, which names no protection space.
    public init?(_ response: HTTPURLResponse) {
        guard let url = response.url else { return nil }
        self.url = url
        status = response.statusCode
        headers = response.allHeaderFields.compactMap { name, value -> Header? in
            guard let name = name as? String, let value = value as? String else { return nil }
            return Header(name: name, value: value)
        }
    }
}
