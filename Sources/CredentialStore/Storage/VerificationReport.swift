/// What ``StoreMaintenance/verify()`` found.
public struct VerificationReport: Hashable, Sendable, Codable {
    /// Credential rows whose every field opened and matched its blind indexes.
    public var credentialsChecked: Int
    /// Default choices checked.
    public var defaultsChecked: Int
    /// One line per fault; no secret is ever named.
    public var problems: [String]
    /// How many of the problems are rows or default choices that fail authentication (altered
    /// outside credstore), as opposed to damage SQLite's integrity check found.
    public var authenticationFailures: Int

    /// Whether no fault was found.
    public var isSound: Bool { problems.isEmpty }
}
