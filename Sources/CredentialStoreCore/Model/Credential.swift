public import Foundation

/// A user name and password, with the tier that says how long it is kept, and what a modern login
/// carries beside them: an expiry, an OAuth refresh token, a label, a comment and attributes.
///
/// Equality and hashing agree on every field. The password and the refresh token never appear in
/// `description`, `debugDescription` or a `dump`, so a credential can be logged or interpolated
/// without leaking either. Every field is encrypted at rest and carried by sync.
public struct Credential: Hashable, Sendable {
    /// The user name; a space holds at most one credential per user.
    public var user: String
    /// The secret.
    public var password: String
    /// The tier the credential is kept in.
    public var persistence: Persistence
    /// The OAuth refresh token that renews ``password`` when it expires: a secret like the
    /// password, never shown.
    public var refreshToken: String?
    /// A name for people to find the credential by.
    public var label: String?
    /// A free-form note.
    public var comment: String?
    /// Attributes a tool attaches (as the Secret Service's attribute maps or KeePass's custom
    /// fields do); a search can select credentials by them.
    public var attributes: [String: String]

    /// Whole seconds since 1970: what is stored, so that a credential reads back equal to what was
    /// written (a `Date` carries fractions of a second that no store keeps).
    private var expirySeconds: Int64?

    /// When the password stops being valid, to the second (a fraction is dropped); `nil` when it
    /// does not expire.
    ///
    /// Expiry is a property, not an event: an expired credential is never a space's default or
    /// best match, but nothing is announced when the clock passes it.
    public var expires: Date? {
        get { expirySeconds.map { Date(timeIntervalSince1970: TimeInterval($0)) } }
        set { expirySeconds = newValue.map { Self.wholeSeconds($0) } }
    }

    /// Creates a credential, kept on disk (``Persistence/permanent``) unless `persistence` says
    /// otherwise: what a credential store is for.
    public init(
        user: String, password: String, persistence: Persistence = .permanent,
        expires: Date? = nil, refreshToken: String? = nil, label: String? = nil, comment: String? = nil,
        attributes: [String: String] = [:]
    ) {
        self.user = user
        self.password = password
        self.persistence = persistence
        self.refreshToken = refreshToken
        self.label = label
        self.comment = comment
        self.attributes = attributes
        self.expirySeconds = expires.map { Self.wholeSeconds($0) }
    }

    /// Whether the password has expired at `date`: its expiry is at or before it.
    public func isExpired(at date: Date = Date()) -> Bool {
        Self.hasPassed(expirySeconds, at: Self.wholeSeconds(date))
    }

    /// The one rule for expiry: an expiry (whole seconds since 1970) has passed from its own
    /// second on; no expiry never passes.
    package static func hasPassed(_ expiry: Int64?, at seconds: Int64) -> Bool {
        expiry.map { $0 <= seconds } ?? false
    }

    /// The expiry in whole seconds since 1970, as stored; `nil` when there is none.
    package var expiresEpochSeconds: Int64? {
        get { expirySeconds }
        set { expirySeconds = newValue }
    }

    /// Whether any field beyond user, password and tier is set.
    package var hasDetails: Bool {
        expirySeconds != nil || refreshToken != nil || label != nil || comment != nil || !attributes.isEmpty
    }

    /// `date` in whole seconds since 1970, as expiries are kept.
    package static func wholeSeconds(_ date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        // A date no calendar reaches saturates rather than traps.
        guard seconds.isFinite else { return seconds > 0 ? .max : .min }
        return Int64(exactly: seconds) ?? (seconds > 0 ? .max : .min)
    }
}

extension Credential: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `Credential(user: "alice", password: <redacted>, persistence: .permanent)`, with the expiry
    /// and label when there are: never the password or the refresh token.
    public var description: String {
        var text = "Credential(user: \(FieldRules.displayEscaped(String(reflecting: user))), password: <redacted>, persistence: .\(persistence.rawValue)"
        if let expires { text += ", expires: \(expires.ISO8601Format())" }
        if refreshToken != nil { text += ", refreshToken: <redacted>" }
        if let label { text += ", label: \(FieldRules.displayEscaped(String(reflecting: label)))" }
        if !attributes.isEmpty { text += ", attributes: \(attributes.count)" }
        return text + ")"
    }

    /// The same text as ``description``, so `debugPrint` and `String(reflecting:)` hide the secrets too.
    public var debugDescription: String { description }

    /// Every field, with `<redacted>` for the password and the refresh token, so `dump` and
    /// debuggers never show either.
    public var customMirror: Mirror {
        var children: [(label: String?, value: Any)] = [("user", user), ("password", "<redacted>"), ("persistence", persistence)]
        if let expires { children.append(("expires", expires)) }
        if refreshToken != nil { children.append(("refreshToken", "<redacted>")) }
        if let label { children.append(("label", label)) }
        if let comment { children.append(("comment", comment)) }
        if !attributes.isEmpty { children.append(("attributes", attributes)) }
        return Mirror(self, children: children)
    }
}
