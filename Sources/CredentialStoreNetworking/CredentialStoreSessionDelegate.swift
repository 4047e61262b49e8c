public import CredentialStore
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A URLSession delegate that answers HTTP authentication challenges from a
/// ``/CredentialStore/CredentialStorage``: pass it to `URLSession(configuration:delegate:delegateQueue:)`.
///
/// ```swift
/// import CredentialStoreNetworking
/// import Foundation
/// #if canImport(FoundationNetworking)
/// import FoundationNetworking
/// #endif
///
/// let storage = try CredentialStorage()
/// let credentials = CredentialStoreSessionDelegate(storage: storage)
/// let session = URLSession(configuration: .default, delegate: credentials, delegateQueue: nil)
/// let request = URLRequest(url: URL(string: "https://intranet.example.com/report.csv")!)
///
/// // Basic on every platform; Digest and a proxy's 407 where Foundation hands them to a delegate:
/// let (data, response) = try await session.data(for: request)
/// // Every 401 and 407 the store can answer, Digest and proxies included, on Linux too:
/// let (same, answered) = try await session.data(for: request, credentialsFrom: storage)
/// ```
///
/// Each challenge is looked up with `CredentialStorage.defaultCredential(answering: .challenge(_:))`:
/// a credential stored without a realm (`ProtectionSpace(url:)`, `credstore add URL --user`)
/// answers its origin's challenges, a credential stored for Digest is never sent as Basic, and a
/// proxy's credential never reaches a server. A stored credential is handed over once per
/// challenge: when it fails (`previousFailureCount > 0`) it is not sent again. The
/// `URLCredential` given to URLSession has persistence `.none`, so that neither Foundation's
/// `URLCredentialStorage` (the keychain, on Apple platforms) nor corelibs' in-memory storage
/// keeps a copy: the store stays the one place the password lives. Basic over plain http (which
/// sends the password readable on the wire) is answered only to a loopback host or with
/// `allowsBasicOverPlainHTTP`.
///
/// ## What URLSession hands a delegate on Linux
///
/// swift-corelibs-foundation (Swift 6.3) raises a challenge only for a 401 whose
/// `WWW-Authenticate` has a `Basic` challenge with a realm: its parser skips every other scheme,
/// a Digest-only 401 comes back as the response without asking the delegate, and so does every
/// 407 (libcurl returns a proxy's 407 as the response). When a 401 offers Digest and Basic, the
/// challenge is the Basic one. For that Basic challenge:
///
/// - `.useCredential` makes corelibs retry with `Authorization: Basic …` built from the
///   credential: this delegate answers it, and the retry's response is the task's.
/// - `.performDefaultHandling` without a credential in corelibs' own storage leaves the task
///   suspended for ever, so on Linux this delegate never returns it for a 401: a challenge the
///   store cannot answer (or a credential that failed) is cancelled, and the task fails with
///   `URLError(.cancelled)` instead of returning the 401. On Apple platforms the delegate returns
///   `.performDefaultHandling`, and the 401 is the response.
/// - corelibs has no way to send a Digest answer (its Digest handler is a `fatalError`), so this
///   delegate never answers Digest with `.useCredential` on Linux.
///
/// The 401s and 407s a delegate cannot answer on Linux (Digest, a proxy's 407) are answered by
/// `URLSession.data(for:credentialsFrom:proxy:allowsBasicOverPlainHTTP:)` and its siblings
/// (upload, download, bytes), called on the same session; they read nothing from the delegate, so
/// the store, the proxy and `allowsBasicOverPlainHTTP` are passed to them again. They read the
/// challenge headers themselves and retry with an `Authorization` (or `Proxy-Authorization`) header computed by a
/// ``CredentialChallengeResponder``. A proxy's 407 on an https `CONNECT` cannot be answered at all
/// (libcurl sends no request header to the proxy): it throws
/// `CredentialStore.CredentialStorageError.Code.proxyTunnelRefused`.
public final class CredentialStoreSessionDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    /// The store the credentials come from.
    public let storage: CredentialStorage
    /// Whether a Basic challenge over plain http (or from a plain http proxy) may be answered,
    /// which sends the password readable on the wire; off by default. A server or proxy on
    /// loopback (127.0.0.0/8, `::1`, `localhost`) gets Basic without it.
    public let allowsBasicOverPlainHTTP: Bool

    /// Creates a delegate answering challenges from `storage`.
    ///
    /// - Parameters:
    ///   - storage: The store the credentials come from.
    ///   - allowsBasicOverPlainHTTP: Answer Basic challenges over plain http; see
    ///     ``allowsBasicOverPlainHTTP``.
    public init(
        storage: CredentialStorage,
        allowsBasicOverPlainHTTP: Bool = false
    ) {
        self.storage = storage
        self.allowsBasicOverPlainHTTP = allowsBasicOverPlainHTTP
    }

    /// Answers a task's authentication challenge with ``disposition(for:)``.
    public func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let (disposition, credential) = disposition(for: challenge)
        completionHandler(disposition, credential)
    }

    /// What this delegate answers to `challenge`, for a delegate of your own that forwards its
    /// password challenges here.
    ///
    /// `.useCredential` with the stored credential (persistence `.none`) when the store answers
    /// the challenge's space, it has not failed yet, and Foundation can send it (on Linux: Basic
    /// only). A challenge for something else than a password (server trust, a client
    /// certificate, NTLM) gets `.performDefaultHandling`. A password challenge left unanswered
    /// gets `.performDefaultHandling` on Apple platforms and `.cancelAuthenticationChallenge` on
    /// Linux, where default handling would leave the task suspended. A store error while looking
    /// up leaves the challenge unanswered: a delegate cannot throw.
    public func disposition(for challenge: URLAuthenticationChallenge) -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        let method = AuthenticationMethod(rawValue: challenge.protectionSpace.authenticationMethod)
        guard AuthenticationMethod.passwordMethods.contains(method) else { return (.performDefaultHandling, nil) }
        #if canImport(FoundationNetworking)
        let unanswered = URLSession.AuthChallengeDisposition.cancelAuthenticationChallenge
        // corelibs answers only Basic itself; `.useCredential` for any other method is a fatalError.
        guard method == .httpBasic else { return (unanswered, nil) }
        #else
        let unanswered = URLSession.AuthChallengeDisposition.performDefaultHandling
        #endif
        // A credential that failed would fail again: sending it once more is the loop
        // previousFailureCount exists to prevent.
        guard challenge.previousFailureCount == 0 else { return (unanswered, nil) }
        let space = ProtectionSpace(challenge.protectionSpace)
        if method != .httpDigest, !space.acceptsBasic(optedIn: allowsBasicOverPlainHTTP) {
            space.logDeclinedBasic(storage.logger)
            return (unanswered, nil)
        }
        guard let found = try? storage.credential(for: challenge), let user = found.user, let password = found.password else {
            return (unanswered, nil)
        }
        return (.useCredential, URLCredential(user: user, password: password, persistence: .none))
    }
}
