/// `30d`, `12h`, `45m`, `90s`: a whole number of days, hours, minutes or seconds, as `add
/// --expires` and `unlock --timeout` take them.
enum DurationText {
    /// The seconds `text` names; nil when it is not a duration, is negative or overflows.
    static func seconds(_ text: String) -> Int? {
        let scale: [Character: Int] = ["d": 86_400, "h": 3_600, "m": 60, "s": 1]
        guard let unit = text.last, let factor = scale[unit], let count = Int(text.dropLast()), count >= 0 else { return nil }
        let (total, overflow) = count.multipliedReportingOverflow(by: factor)
        return overflow ? nil : total
    }
}
