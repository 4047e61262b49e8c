import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

/// A hybrid logical clock reading: wall milliseconds, a counter for events within one
/// millisecond (or while the wall clock lags a remote one), and the device that made it.
///
/// Readings are totally ordered — wall, then counter, then device id — so last-writer-wins picks
/// the same winner on every machine, whatever order bundles arrive in.
struct HybridTimestamp: Hashable, Comparable, Sendable {
    var wall: Int64
    var counter: Int64
    var device: [UInt8]

    static func < (lhs: Self, rhs: Self) -> Bool {
        if lhs.wall != rhs.wall { return lhs.wall < rhs.wall }
        if lhs.counter != rhs.counter { return lhs.counter < rhs.counter }
        return lhs.device.lexicographicallyPrecedes(rhs.device)
    }

    /// Whether a reading from elsewhere is one a working clock could have made: counters stay far
    /// from overflow (a hostile `Int64.max` would trap the next tick) and walls are not negative.
    var isPlausible: Bool {
        wall >= 0 && counter >= 0 && counter < 1 << 40 && device.count == DeviceIdentity.idBytes
    }

    func write(to writer: inout ByteWriter) {
        writer.append(wall)
        writer.append(counter)
        writer.append(raw: device)
    }

    static func read(from reader: inout ByteReader) throws -> HybridTimestamp {
        let wall = try reader.readInt64()
        let counter = try reader.readInt64()
        let device = Array(try reader.readRaw(count: DeviceIdentity.idBytes))
        return HybridTimestamp(wall: wall, counter: counter, device: device)
    }

    /// The clock's counter plus one. The stored clock is read back from the store file, so it
    /// can hold anything: a counter at `Int64.max` is damage (`corrupt`), never a trap. So is one
    /// past what ``isPlausible`` accepts, which every other store would refuse to merge.
    private static func next(_ counter: Int64) throws -> Int64 {
        let (sum, overflow) = counter.addingReportingOverflow(1)
        guard !overflow, counter >= 0, sum < 1 << 40 else {
            throw CredentialStorageError(.corrupt, "the store's sync clock holds an impossible reading; it was damaged or altered: restore the store from a backup")
        }
        return sum
    }

    /// The clock after a local event: the wall clock if it moved on, else one more tick.
    static func tick(clock: (wall: Int64, counter: Int64), now: Int64) throws -> (wall: Int64, counter: Int64) {
        now > clock.wall ? (now, 0) : (clock.wall, try next(clock.counter))
    }

    /// The clock after seeing `remote`: never behind it, so later local edits win over it.
    static func receive(clock: (wall: Int64, counter: Int64), remote: HybridTimestamp, now: Int64) throws -> (wall: Int64, counter: Int64) {
        let wall = max(now, clock.wall, remote.wall)
        switch (wall == clock.wall, wall == remote.wall) {
        case (true, true): return (wall, try next(max(clock.counter, remote.counter)))
        case (true, false): return (wall, try next(clock.counter))
        case (false, true): return (wall, try next(remote.counter))
        case (false, false): return (wall, 0)
        }
    }
}
