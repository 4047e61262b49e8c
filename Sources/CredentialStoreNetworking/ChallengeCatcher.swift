import CredentialStore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Takes a session's HTTP authentication challenges and gives the challenge response back to the
/// caller, who answers it from the store; other challenges (server trust, client certificates)
/// get the system's default handling.
final class ChallengeCatcher: NSObject, URLSessionDataDelegate, Sendable {
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
        // A streamed response whose headers were already returned ends here, without the
        // cancellation error: the challenge is its whole answer (corelibs keeps its body).
        if let body = streams.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) {
            body.deliverHead(.failure(URLError(.cancelled)))
            body.continuation.finish()
        }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    /// Refuses every redirect, so that the 3xx comes back and the bridge follows it with its checks.
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    /// The streamed requests in flight, by task identifier.
    private let streams = Mutex<[Int: StreamedBody]>([:])

    /// Starts `request` as a data task whose delegate calls this catcher gets, and returns once
    /// its response's headers arrived; the body follows in the stream.
    func stream(_ request: URLRequest, in session: URLSession) async throws -> (StreamedBody, URLResponse) {
        let (bytes, continuation) = AsyncThrowingStream<UInt8, any Error>.makeStream()
        let task = session.dataTask(with: request)
        // The caller stopped reading (or the body ended): nothing more is wanted from the server.
        continuation.onTermination = { _ in task.cancel() }
        let body = StreamedBody(bytes: bytes, continuation: continuation, task: task)
        let response = try await withCheckedThrowingContinuation { (head: CheckedContinuation<URLResponse, any Error>) in
            body.waitForHead(head)
            streams.withLock { $0[task.taskIdentifier] = body }
            task.resume()
        }
        return (body, response)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        streams.withLock { $0[dataTask.taskIdentifier] }?.deliverHead(.success(response))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let body = streams.withLock({ $0[dataTask.taskIdentifier] }) else { return }
        for byte in data { body.continuation.yield(byte) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let body = streams.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        body.deliverHead(.failure(error ?? URLError(.badServerResponse)))
        if let error { body.continuation.finish(throwing: error) } else { body.continuation.finish() }
    }

    /// Runs one request; a challenge this catcher cancelled comes back as its response, without
    /// a value (corelibs does not expose the body of a challenge it handed to a delegate).
    func fetch<Value>(_ operation: () async throws -> (Value, URLResponse)) async throws -> (Value?, URLResponse) {
        caught.withLock { $0 = nil }
        do {
            let (value, response) = try await operation()
            return (value, response)
        } catch {
            guard let response = caught.withLock({ $0 }) else { throw error }
            return (nil, response)
        }
    }
}
