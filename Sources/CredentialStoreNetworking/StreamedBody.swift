import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// One streamed response: its body's bytes as they arrive, the task behind them, and the caller
/// waiting for the headers until they arrive.
final class StreamedBody: Sendable {
    let bytes: AsyncThrowingStream<UInt8, any Error>
    let continuation: AsyncThrowingStream<UInt8, any Error>.Continuation
    private let task: URLSessionTask?
    private let head = Mutex<CheckedContinuation<URLResponse, any Error>?>(nil)

    init(bytes: AsyncThrowingStream<UInt8, any Error>, continuation: AsyncThrowingStream<UInt8, any Error>.Continuation,
         task: URLSessionTask?) {
        self.bytes = bytes
        self.continuation = continuation
        self.task = task
    }

    /// A body with nothing in it: a challenge the catcher took has no body to give.
    static var empty: StreamedBody {
        let (bytes, continuation) = AsyncThrowingStream<UInt8, any Error>.makeStream()
        continuation.finish()
        return StreamedBody(bytes: bytes, continuation: continuation, task: nil)
    }

    func waitForHead(_ waiting: CheckedContinuation<URLResponse, any Error>) {
        head.withLock { $0 = waiting }
    }

    /// Resumes the caller waiting for the headers, once.
    func deliverHead(_ result: Result<URLResponse, any Error>) {
        head.withLock {
            $0?.resume(with: result)
            $0 = nil
        }
    }

    /// Drops a response that is not returned: its request stops, its stream ends.
    func cancel() {
        task?.cancel()
        continuation.finish()
    }
}
