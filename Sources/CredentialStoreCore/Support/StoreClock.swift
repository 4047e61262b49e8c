/// Where the store reads the time: wall-clock milliseconds since 1970, for row timestamps, the
/// sync clock, tombstone expiry, bundle age and the change log's retention.
///
/// A store takes one when it is made (``SystemClock`` unless a test passes its own), so that
/// every reading of one store comes from the same place.
package protocol StoreClock: Sendable {
    /// Milliseconds since 1970-01-01 00:00 UTC.
    func now() -> Int64
}
