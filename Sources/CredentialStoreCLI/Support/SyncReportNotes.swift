package import CredentialStore
import Foundation

/// What an import report says beyond its counts, for `sync` and `import`: the revocations that
/// took effect, the items dropped because this store was stale with respect to the bundle's
/// device, and the changes held back because the machine that made them has a clock too far ahead.
package enum SyncReportNotes {
    /// One stderr line per fact (each ending in a newline); none when there is nothing to say.
    /// `bundle` names the file, when it is one of a sync folder's; `thisDevice` is this store's
    /// device key, so that a revocation of this very device reads as one.
    package static func lines(_ report: ImportReport, bundle: String?, thisDevice: DeviceKey? = nil) -> [String] {
        let source = bundle.map { "\(Describe.cell($0)): " } ?? ""
        var lines: [String] = []
        for revocation in report.revocations where revocation.key == thisDevice {
            lines.append("credstore: note: \(source)this device was revoked by \(revocation.revokedBy) on \(Describe.timestamp(revocation.revoked)): that device no longer reads what this store writes; it must trust this store's key again for that\n")
        }
        for revocation in report.revocations where revocation.key != thisDevice {
            lines.append("credstore: note: \(source)\(revocation.key) was revoked by \(revocation.revokedBy) on \(Describe.timestamp(revocation.revoked)): this store no longer merges its bundles nor seals to it; `credstore device list` shows it\n")
        }
        for dropped in report.dropped {
            lines.append("credstore: note: \(source)dropped \(Describe.cell(dropped.user)) at \(Describe.space(dropped.space)): this store had not merged that device's bundle for more than 180 days, and the device may have deleted it meanwhile; if it is still needed, add it again with `\(addCommand(dropped))`\n")
        }
        if report.heldBack > 0 {
            let machines = report.clocksAhead.isEmpty
                ? "on a machine whose clock is ahead, relayed by \(bundle.map { "the machine that writes \(Describe.cell($0))" } ?? "the bundle's machine")"
                : "on " + report.clocksAhead.map { "the machine that writes \(Describe.cell($0)).csbundle" }.joined(separator: ", ")
            lines.append("credstore: note: \(source)\(report.heldBack) change\(report.heldBack == 1 ? "" : "s") held back: made \(machines), more than 24 hours ahead of this machine's clock; fix the clock there (or this machine's, if it is behind): they merge once the clocks agree\n")
        }
        return lines
    }

    /// `credstore add URL [--realm R] [--method M] [--proxy T] --user U --persistence synchronizable`:
    /// the command that sets a dropped credential again, on every synced machine.
    static func addCommand(_ dropped: DroppedCredential) -> String {
        let space = dropped.space
        let host = space.host.contains(":") ? "[\(space.host)]" : space.host
        let scheme = space.proxyType == nil ? space.protocol ?? "https" : "http"
        var words = ["credstore", "add", "\(scheme)://\(host):\(space.port)"]
        if let realm = space.realm { words += ["--realm", realm] }
        if space.authenticationMethod != .default { words += ["--method", Describe.method(space.authenticationMethod)] }
        if let proxy = space.proxyType { words += ["--proxy", proxy.rawValue] }
        words += ["--user", dropped.user, "--persistence", "synchronizable"]
        return Describe.cell(ShellWords.joined(words))
    }

    /// The report's fields beyond the counts, for `--json`: only those that are not empty.
    static func jsonFields(_ report: ImportReport) -> [(String, JSONValue)] {
        var fields: [(String, JSONValue)] = []
        if !report.revocations.isEmpty {
            fields.append(("revocations", .array(report.revocations.map { revocation in
                .object([
                    ("publicKey", .string(revocation.key.description)), ("revokedBy", .string(revocation.revokedBy.description)),
                    ("revoked", .string(Describe.timestamp(revocation.revoked))),
                ])
            })))
        }
        if !report.dropped.isEmpty {
            fields.append(("dropped", .array(report.dropped.map { .object([("space", Describe.spaceJSON($0.space)), ("user", .string($0.user))]) })))
        }
        if report.heldBack > 0 {
            fields.append(("heldBack", .number(report.heldBack)))
            fields.append(("clocksAhead", .array(report.clocksAhead.map(JSONValue.string))))
        }
        return fields
    }
}
