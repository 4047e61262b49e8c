public import CredentialStore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Answers HTTP 401 and 407 challenges with credentials from a ``/CredentialStore/CredentialStorage``, the way
/// Foundation's `URLAuthenticationChallenge` flow does it.
///
/// corelibs' `URLCredentialStorage` compares protection spaces by object identity, so on Linux
/// URLSession's own challenge path never finds a credential; this type does the lookup by value.
///
/// ```swift
/// let responder = CredentialChallengeResponder(storage: storage)
/// let response = ChallengeResponse(url: url, status: 401, headers: headers)
/// switch try responder.answer(to: response, previousFailureCount: 0).disposition {
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
    /// Whether a Basic challenge over plain http (or from a plain http proxy) may be answered.
    ///
    /// Off by default: Basic sends the password itself, readable by anyone on the path, so only a
    /// space whose `.CredentialStore.ProtectionSpace.receivesCredentialSecurely` is true, or whose
    /// host is loopback (127.0.0.0/8, `::1`, `localhost`: what is sent there stays on the
    /// machine), gets it. Turn it on for a plain http host elsewhere, knowingly.
    public let allowsBasicOverPlainHTTP: Bool
    /// Makes Digest client nonces; injectable so that tests can check a response by hand.
    private let clientNonce: @Sendable () -> String

    /// The most distinct protection spaces looked up in the store for one response.
    ///
    /// A hostile server can list thousands of realms in one header; each lookup costs store reads
    /// and decryption, so the strongest few are tried and the rest ignored.
    public static let maximumSpacesPerResponse = 8

    /// Creates a responder over `storage`.
    ///
    /// - Parameters:
    ///   - storage: The store the credentials come from.
    ///   - allowsBasicOverPlainHTTP: Answer Basic challenges whose space does not receive the
    ///     credential securely (plain http, plain http proxy); see ``allowsBasicOverPlainHTTP``.
    ///   - clientNonce: The Digest `cnonce` source; random by default.
    public init(
        storage: CredentialStorage,
        allowsBasicOverPlainHTTP: Bool = false,
        clientNonce: @escaping @Sendable () -> String = { DigestResponder.randomClientNonce() }
    ) {
        self.storage = storage
        self.allowsBasicOverPlainHTTP = allowsBasicOverPlainHTTP
        self.clientNonce = clientNonce
    }

    /// Decides how to answer `response`, and names the protection space answered.
    ///
    /// Of the challenges offered, the strongest one that a stored credential can answer wins,
    /// whatever the header order: Digest with SHA-512-256, then SHA-256, then MD5 (each also in
    /// its `-sess` form), then Basic. A challenge without a realm (or with an empty one) is ignored,
    /// as RFC 7617 and RFC 7616 make the realm required; a Basic challenge whose space would
    /// receive the password in clear text is ignored unless ``allowsBasicOverPlainHTTP``; at
    /// most ``maximumSpacesPerResponse`` spaces are looked up. Each challenge's credential comes
    /// from `CredentialStorage.defaultCredential(answering:)`: its exact space, the same realm
    /// under a compatible method, then the origin's credential stored without a realm. Hostile
    /// challenge content (a malformed header, a realm the store refuses) never throws: the
    /// response stands.
    ///
    /// ```swift
    /// if let response = ChallengeResponse(httpResponse),
    ///    case .useCredential(_, let authorization) = try responder.answer(to: response, method: "GET").disposition {
    ///     request.setValue(authorization, forHTTPHeaderField: httpResponse.statusCode == 407 ? "Proxy-Authorization" : "Authorization")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - response: The response; anything but a 401 or 407 gets ``Disposition/performDefaultHandling``.
    ///   - method: The request method, which a Digest response signs.
    ///   - previousFailureCount: How many times this challenge was already answered and failed.
    ///   - proxy: The proxy the request went through; required to answer a 407.
    /// - Throws: The store's integrity and I/O errors only.
    public func answer(
        to response: ChallengeResponse,
        method: String = "GET",
        previousFailureCount: Int = 0,
        proxy: ProxyEndpoint? = nil
    ) throws -> Answer {
        let nothing = Answer(disposition: .performDefaultHandling, space: nil)
        let (url, status, headers) = (response.url, response.status, response.headers)
        guard status == 401 || status == 407 else { return nothing }
        // A 407 without the proxy it came through cannot name a proxy space.
        if status == 407, proxy == nil { return nothing }
        let headerName = status == 407 ? "proxy-authenticate" : "www-authenticate"
        let challenges: [AuthenticationChallenge]
        do {
            challenges = try AuthenticationChallenge.parse(
                headers.filter { $0.name.lowercased() == headerName }.map(\.value))
        } catch {
            // A malformed or oversized challenge cannot be answered; the response stands as sent.
            return nothing
        }

        let candidates = Self.candidates(challenges)
        var sawFailedCredential = false
        var lookedUp: [ProtectionSpace: Credential?] = [:]
        for candidate in candidates {
            let challenge = candidate.challenge
            guard let space = try? Self.space(for: challenge, url: url, status: status, proxy: proxy) else { continue }
            // Basic sends the password itself: only where it travels protected or stays on this
            // machine, unless opted in.
            if challenge.scheme == "basic", !space.acceptsBasic(optedIn: allowsBasicOverPlainHTTP) {
                space.logDeclinedBasic(storage.logger)
                continue
            }
            let credential: Credential?
            if let known = lookedUp[space] {
                credential = known
            } else {
                guard lookedUp.count < Self.maximumSpacesPerResponse else { continue }
                do {
                    credential = try storage.defaultCredential(answering: .challenge(space))?.credential
                } catch let error as CredentialStorageError where Self.isChallengeContentError(error) {
                    // A realm the store cannot hold, or a match it will not guess: the server's
                    // doing, so the response stands rather than an error escaping.
                    lookedUp[space] = .some(nil)
                    continue
                }
                lookedUp[space] = .some(credential)
            }
            guard let credential else { continue }
            // A stored credential that failed would fail again: answering with it again is the
            // loop Foundation's previousFailureCount exists to prevent. The one exception is a
            // Digest nonce gone stale, which says the credential was right, once.
            let stale = challenge.scheme == "digest" && challenge.parameters["stale"]?.lowercased() == "true"
            guard previousFailureCount == 0 || (stale && previousFailureCount == 1) else {
                sawFailedCredential = true
                continue
            }
            let authorization: String
            do {
                authorization = try authorizationValue(challenge, credential: credential, url: url, method: method)
            } catch {
                // A user name Basic cannot carry, an exhausted nonce: try the next challenge.
                continue
            }
            return Answer(disposition: .useCredential(credential, authorization: authorization), space: space)
        }
        if sawFailedCredential { return Answer(disposition: .cancel, space: nil) }
        if candidates.isEmpty, !challenges.isEmpty { return Answer(disposition: .rejectProtectionSpace, space: nil) }
        return nothing
    }

    /// The challenges this responder could answer, strongest first (stable within a strength, so
    /// header order breaks ties): realm present and non-empty, Basic, or Digest with an algorithm
    /// and qop ``DigestResponder`` supports.
    static func candidates(_ challenges: [AuthenticationChallenge]) -> [(challenge: AuthenticationChallenge, strength: Int)] {
        var result: [(challenge: AuthenticationChallenge, strength: Int)] = []
        for challenge in challenges {
            guard let realm = challenge.realm, !realm.isEmpty else { continue }
            switch challenge.scheme {
            case "basic":
                result.append((challenge, 0))
            case "digest":
                guard let responder = try? DigestResponder(challenge: challenge) else { continue }
                switch responder.algorithm {
                case .sha512_256, .sha512_256Session: result.append((challenge, 3))
                case .sha256, .sha256Session: result.append((challenge, 2))
                case .md5, .md5Session: result.append((challenge, 1))
                }
            default:
                continue
            }
        }
        return result.enumerated()
            .sorted { $0.element.strength != $1.element.strength ? $0.element.strength > $1.element.strength : $0.offset < $1.offset }
            .map(\.element)
    }

    private static func space(
        for challenge: AuthenticationChallenge, url: URL, status: Int, proxy: ProxyEndpoint?
    ) throws -> ProtectionSpace {
        let method: AuthenticationMethod = challenge.scheme == "basic" ? .httpBasic : .httpDigest
        if status == 407, let proxy {
            return ProtectionSpace(proxy: proxy,
                                   realm: challenge.realm, authenticationMethod: method)
        }
        return try ProtectionSpace(url: url, realm: challenge.realm, authenticationMethod: method)
    }

    /// Errors that a server's challenge can cause in a lookup, as opposed to the store's own
    /// integrity and I/O errors, which still reach the caller.
    static func isChallengeContentError(_ error: CredentialStorageError) -> Bool {
        [.invalidInput, .invalidProtectionSpace, .ambiguousMatch].contains(error.code)
    }

    /// Records that `credential` was accepted for `space`, keeping it as its persistence says
    /// (`.none` keeps nothing, `.forSession` only in this storage's memory).
    ///
    /// The store's own answer for `space` (`CredentialStorage.defaultCredential(answering:)`,
    /// perhaps found in the realm's space without a method or as the origin's credential without a
    /// realm) is already kept where its owner put it, and nothing is written: a copy in `space`
    /// would answer first from then on, so replacing or removing the credential where it was
    /// stored would no longer stop the old password being sent.
    public func succeeded(_ credential: Credential, for space: ProtectionSpace) throws {
        if credential.persistence != .none, try storage.defaultCredential(answering: .challenge(space))?.credential == credential { return }
        try storage.set(credential, for: space)
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
