import CredentialStoreCore
import Foundation

/// The clock checks an import applies to a bundle before merging it, judged per writer: a machine
/// whose clock is right is never refused, or blamed, for readings it relayed from a machine whose
/// clock is ahead — neither the readings of that machine's changes, nor those of its own changes
/// made after merging them, which its hybrid logical clock carries past them.
///
/// - A reading more than ``SyncWindows/maximumClockSkew`` ahead of this machine's clock is held
///   back, with its change: the rest merges, and the held-back changes merge once the clocks
///   agree. The machines that made such readings, but for the bundle's own device, are named.
/// - Only when the bundle's own device made such a reading and its creation time (that device's
///   wall clock) is itself that far ahead is the bundle refused (`invalidBundle`), naming that
///   device: its clock is off. A creation time that far ahead is no reason to refuse a bundle
///   whose readings are all within the rule.
/// - The bundle's age is judged by the newest reading it carries that is not held back, or its
///   creation time if later (counted at most as now plus the skew). Older than
///   ``SyncWindows/bundleLifetime``, the bundle is refused (`bundleTooOld`).
struct BundleAcceptance {
    /// The device that wrote the bundle.
    let sender: [UInt8]
    /// When the bundle was written, by the sender's wall clock.
    let created: Int64
    /// This machine's clock when the import began.
    let now: Int64
    /// The devices that made readings this bundle carries from a clock too far ahead.
    private(set) var clocksAhead: Set<[UInt8]> = []

    init(sender: [UInt8], created: Int64, now: Int64) {
        self.sender = sender
        self.created = created
        self.now = now
    }

    /// The latest reading accepted.
    var limit: Int64 { now + SyncWindows.maximumClockSkew }

    /// Checks one reading of the first pass: whether it merges now (false: held back).
    mutating func accepts(_ stamp: HybridTimestamp) throws -> Bool {
        guard stamp.isPlausible else {
            throw CredentialStorageError(.invalidBundle, "the bundle carries clock readings no working clock makes; it was altered or made by broken software")
        }
        guard stamp.wall > limit else { return true }
        guard stamp.device != sender || created <= limit else {
            throw CredentialStorageError(.invalidBundle, "the bundle comes from a clock more than 24 hours ahead of this machine's, on the machine that writes \(Self.name(stamp.device)).csbundle; fix the clock there (or this machine's, if it is behind) and export again")
        }
        clocksAhead.insert(stamp.device)
        return false
    }

    /// Whether a reading of the merging pass is held back; a reading the first pass neither held
    /// back nor accepted means the file changed in between.
    func holdsBack(_ stamp: HybridTimestamp) throws -> Bool {
        guard stamp.isPlausible else { throw BundleFormat.invalid("it changed while it was being read") }
        guard stamp.wall > limit else { return false }
        guard clocksAhead.contains(stamp.device) else { throw BundleFormat.invalid("it changed while it was being read") }
        return true
    }

    /// Refuses a bundle whose newest reading is older than ``SyncWindows/bundleLifetime``.
    func checkAge(newest: HybridTimestamp?) throws {
        let reading = max(min(created, limit), newest?.wall ?? .min)
        guard reading >= now - SyncWindows.bundleLifetime else {
            throw CredentialStorageError(.bundleTooOld, "the bundle is older than 180 days, so deletions made since may be forgotten; export a fresh one")
        }
    }

    /// The devices whose clocks are ahead, as bundle names spell them, sorted: the bundle's own
    /// device only relayed its readings (its clock is within the rule), so it is not named.
    var clocksAheadNames: [String] {
        clocksAhead.subtracting([sender]).map(Self.name).sorted()
    }

    /// A device id in hex: the name of the bundle that device writes in a sync folder.
    static func name(_ device: [UInt8]) -> String {
        device.map { String(format: "%02x", $0) }.joined()
    }
}
