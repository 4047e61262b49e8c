import Foundation
import Logging
import Synchronization

/// A log handler that keeps what it is given, for tests that check what was logged.
final class CapturedLog: LogHandler, @unchecked Sendable {
    struct Message: Sendable {
        var level: Logger.Level
        var text: String
        /// The `space` metadata, when there was one.
        var space: String
    }

    private let kept = Mutex<[Message]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    var messages: [Message] { kept.withLock { $0 } }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let space = event.metadata?["space"].map { "\($0)" } ?? ""
        kept.withLock { $0.append(Message(level: event.level, text: "\(event.message)", space: space)) }
    }
}
