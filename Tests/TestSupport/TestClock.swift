import CredentialStore
import Synchronization

/// A clock a test moves by hand: it starts at the system's time and stands still until advanced,
/// so that "later", "181 days on" or "the same millisecond" need no sleeping and no edited rows.
package final class TestClock: StoreClock {
    private let reading: Mutex<Int64>

    package init(startingAt start: Int64 = SystemClock().now()) {
        reading = Mutex(start)
    }

    package func now() -> Int64 {
        reading.withLock { $0 }
    }

    /// Moves the clock on by `milliseconds` (back, when negative).
    package func advance(by milliseconds: Int64) {
        reading.withLock { $0 += milliseconds }
    }

    /// One day, in the clock's milliseconds.
    package static let day: Int64 = 24 * 3600 * 1000
}
