public import CredentialStore
public import Foundation

/// Answers HTTP 401 and 407 challenges with credentials from a ``CredentialStorage``, the way
/// Foundation's `URLAuthenticationChallenge` flow does it.
///
/// corelibs' `URLCredentialStorage` compares protection spaces by object identity, so on Linux
/// URLSession's own challenge path never finds a credential; this type does the lookup by value.
///
/// ```swift
/// let responder = CredentialChallengeResponder(storage: storage)
/// switch try responder.respond(to: url, status: 401, headers: headers, previousFailureCount: 0) {
/// case .useCredential(_, let authorization): request.setValue(authorization, forHTTPHeaderField: "Authorization")
/// default: break
/// }
/// ```
public final class CredentialChallengeResponder: Sendable {
    /// What to do with a challenge, as `URLSession.AuthChallengeDisposition` names it.
    public enum Disposition: Hashable, Sendable {
        /// Answer with this credential; `authorization` is the header value to send.
        case useCredential(Credential, authorization: String)
        /// The store has nothing for this challenge; let the default handling (usually: return the
        /// response as is) proceed.
        case performDefaultHandling
        /// The stored credential already failed; asking again with it would loop, so give up.
        case cancel
        /// The challenge asks only for schemes this responder cannot answer (NTLM, Negotiate …).
        case rejectProtectionSpace
    }

    /// A disposition together with the space it answers, for callers that report success.
    public struct Answer: Hashable, Sendable {
        /// What to do.
        public let disposition: Disposition
        /// The protection space of the challenge that was answered; `nil` unless the disposition
        /// is ``Disposition/useCredential(_:authorization:)``.
        public let space: ProtectionSpace?
    }

    /// The store the credentials come from and successes go to.
    public let storage: CredentialStorage
    /// Makes Digest client nonces; injectable so that tests can check a response by hand.
    private let clientNonce: @Sendable () -> String

    /// Creates a responder over `storage`.
    ///
    /// - Parameter clientNonce: The Digest `cnonce` source; random by default.
    public init(
        storage: CredentialStorage,
        clientNonce: @escaping @Sendable () -> String = { DigestResponder.randomClientNonce() }
    ) {
        self.storage = storage
        self.clientNonce = clientNonce
    }

    /// Decides how to answer a response to a request for `url`.
    ///
    /// - Parameters:
    ///   - url: The URL the request went to.
    ///   - method: The request method, which a Digest response signs.
    ///   - status: The response status; anything but 401 and 407 gets ``Disposition/performDefaultHandling``.
    ///   - headers: The response headers (the `WWW-Authenticate` / `Proxy-Authenticate` values).
    ///   - previousFailureCount: How many times this challenge was already answered and failed.
    ///   - proxy: The proxy the request went through; required to answer a 407.
    /// - Throws: The store's errors (an ambiguous match among realms, integrity errors).
    public func respond(
        to url: URL,
        method: String = "GET",
        status: Int,
        headers: [(name: String, value: String)],
        previousFailureCount: Int = 0,
        proxy: (host: String, port: Int, type: ProxyType)? = nil
    ) throws -> Disposition {
        try answer(to: url, method: method, status: status, headers: headers,
                   previousFailureCount: previousFailureCount, proxy: proxy).disposition
    }

    /// Like ``respond(to:method:status:headers:previousFailureCount:proxy:)``, and also names the
    /// protection space answered.
    public func answer(
        to url: URL,
        method: String = "GET",
        status: Int,
        headers: [(name: String, value: String)],
        previousFailureCount: Int = 0,
        proxy: (host: String, port: Int, type: ProxyType)? = nil
    ) throws -> Answer {
        let nothing = Answer(disposition: .performDefaultHandling, space: nil)
        guard status == 401 || status == 407 else { return nothing }
        let headerName = status == 407 ? "proxy-authenticate" : "www-authenticate"
        let spaces: [ProtectionSpace]
        let challenges: [AuthenticationChallenge]
        do {
            spaces = try ProtectionSpace.spaces(for: url, status: status, headers: headers, proxy: proxy)
            challenges = try AuthenticationChallenge.parse(
                headers.filter { $0.name.lowercased() == headerName }.map(\.value))
        } catch let error as CredentialStorageError where error.code == .invalidInput {
            // A malformed challenge (or a 407 without its proxy) cannot be answered; the response
            // stands as the server sent it.
            return nothing
        }

        var sawAnswerable = false
        var sawFailedCredential = false
        for space in spaces where space.authenticationMethod == .httpBasic || space.authenticationMethod == .httpDigest {
            let scheme = space.authenticationMethod == .httpBasic ? "basic" : "digest"
            guard let challenge = challenges.first(where: { $0.scheme == scheme && $0.realm == space.realm }) else { continue }
            sawAnswerable = true
            guard let credential = try storedCredential(for: space, url: url) else { continue }
            // A stored credential that failed would fail again: answering with it again is the
            // loop Foundation's previousFailureCount exists to prevent. The one exception is a
            // Digest nonce gone stale, which says the credential was right, once.
            let stale = scheme == "digest" && challenge.parameters["stale"]?.lowercased() == "true"
            guard previousFailureCount == 0 || (stale && previousFailureCount == 1) else {
                sawFailedCredential = true
                continue
            }
            let authorization: String
            do {
                authorization = try authorizationValue(challenge, credential: credential, url: url, method: method)
            } catch let error as CredentialStorageError where error.code == .invalidInput {
                // An unsupported Digest variant, or a user name Basic cannot carry: try the next.
                continue
            }
            return Answer(disposition: .useCredential(credential, authorization: authorization), space: space)
        }
        if sawFailedCredential { return Answer(disposition: .cancel, space: nil) }
        if !sawAnswerable, !spaces.isEmpty { return Answer(disposition: .rejectProtectionSpace, space: nil) }
        return nothing
    }

    /// Records that `credential` was accepted for `space`, keeping it as its persistence says
    /// (`.none` keeps nothing, `.forSession` only in this storage's memory).
    public func succeeded(_ credential: Credential, for space: ProtectionSpace) throws {
        try storage.set(credential, for: space)
    }

    /// The stored default for a challenge's space: the exact space (realm and method) first, then
    /// the space as users usually store it (same realm, any method).
    private func storedCredential(for space: ProtectionSpace, url: URL) throws -> Credential? {
        if let credential = try storage.defaultCredential(for: space) { return credential }
        if let proxyType = space.proxyType {
            let anyMethod = ProtectionSpace(proxyHost: space.host, port: space.port, type: proxyType, realm: space.realm)
            return try storage.defaultCredential(for: anyMethod)
        }
        return try storage.defaultCredential(for: url, realm: space.realm)
    }

    private func authorizationValue(
        _ challenge: AuthenticationChallenge, credential: Credential, url: URL, method: String
    ) throws -> String {
        if challenge.scheme == "basic" {
            return try AuthorizationValue.basic(user: credential.user, password: credential.password)
        }
        var digest = try DigestResponder(challenge: challenge, clientNonce: clientNonce)
        return try digest.authorization(method: method, uri: Self.requestURI(url), credential: credential)
    }

    /// The request-target a Digest response signs: the path and query as sent on the wire.
    static func requestURI(_ url: URL) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        var uri = components?.percentEncodedPath ?? "/"
        if uri.isEmpty { uri = "/" }
        if let query = components?.percentEncodedQuery { uri += "?" + query }
        return uri
    }
}
