public import Foundation

/// A user name and password, with the tier that says how long it is kept, and what a modern login
/// carries beside them: an expiry, an OAuth refresh token, a label, a comment and attributes.
///
/// Equality and hashing agree on every field. The password and the refresh token never appear in
/// `description`, `debugDescription` or a `dump`, so a credential can be logged or interpolated
/// without leaking either. Every field is encrypted at rest and carried by sync.
///
/// A write replaces what it names and keeps the rest: a ``persistence`` left unset, and details
/// left `nil` (or attributes not given), keep those of the credential the write replaces (see
/// `CredentialStorage.set(_:for:options:)`).
public struct Credential: Hashable, Sendable {
    /// The user name; a space holds at most one credential per user.
    public var user: String
    /// The secret.
    public var password: String
    /// The tier the credential is kept in: the one set, else ``Persistence/permanent``.
    ///
    /// A credential whose tier was never set takes the tier of the one it replaces when it is
    /// written, so changing a password never moves a credential out of the synchronizable tier
    /// by accident.
    public var persistence: Persistence {
        get { chosenPersistence ?? .permanent }
        set { chosenPersistence = newValue }
    }

    /// The tier the caller chose; nil when it left the tier to the store.
    private var chosenPersistence: Persistence?
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

    /// Creates a credential whose tier is left to the write: it keeps the tier of the credential
    /// it replaces, or is ``Persistence/permanent`` when it is new (what a credential store is for).
    public init(
        user: String, password: String, expires: Date? = nil, refreshToken: String? = nil, label: String? = nil,
        comment: String? = nil, attributes: [String: String] = [:]
    ) {
        self.user = user
        self.password = password
        self.chosenPersistence = nil
        self.refreshToken = refreshToken
        self.label = label
        self.comment = comment
        self.attributes = attributes
        self.expirySeconds = expires.map { Self.wholeSeconds($0) }
    }

    /// Creates a credential kept in the tier `persistence` names.
    public init(
        user: String, password: String, persistence: Persistence, expires: Date? = nil, refreshToken: String? = nil,
        label: String? = nil, comment: String? = nil, attributes: [String: String] = [:]
    ) {
        self.init(
            user: user, password: password, expires: expires, refreshToken: refreshToken, label: label, comment: comment,
            attributes: attributes)
        self.chosenPersistence = persistence
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

    /// Whether the tier was chosen, rather than left to the write (see ``persistence``).
    package var choosesPersistence: Bool { chosenPersistence != nil }

    /// This credential as a write that names it leaves `existing`: what this one names replaces
    /// `existing`'s, and what it leaves unset (the tier, each detail; each attribute it does not
    /// give) is `existing`'s.
    ///
    /// An expiry that has passed by `now` is the old password's alone: a new password does not
    /// keep it, or it would be expired the moment it is stored.
    package func keepingUnnamed(of existing: Credential, now: Int64) -> Credential {
        var result = self
        result.chosenPersistence = chosenPersistence ?? existing.persistence
        let expiredWithTheOldPassword = password != existing.password && Self.hasPassed(existing.expirySeconds, at: now)
        result.expirySeconds = expirySeconds ?? (expiredWithTheOldPassword ? nil : existing.expirySeconds)
        result.refreshToken = refreshToken ?? existing.refreshToken
        result.label = label ?? existing.label
        result.comment = comment ?? existing.comment
        result.attributes = existing.attributes.merging(attributes) { _, named in named }
        return result
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

extension Credential {
    /// Equal when every field is, the tier as ``persistence`` reads it (chosen or not).
    public static func == (lhs: Credential, rhs: Credential) -> Bool {
        lhs.user == rhs.user && lhs.password == rhs.password && lhs.persistence == rhs.persistence
            && lhs.expirySeconds == rhs.expirySeconds && lhs.refreshToken == rhs.refreshToken && lhs.label == rhs.label
            && lhs.comment == rhs.comment && lhs.attributes == rhs.attributes
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(user)
        hasher.combine(password)
        hasher.combine(persistence)
        hasher.combine(expirySeconds)
        hasher.combine(refreshToken)
        hasher.combine(label)
        hasher.combine(comment)
        hasher.combine(attributes)
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
