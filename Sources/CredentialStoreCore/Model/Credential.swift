/// A user name and password, with the tier that says how long it is kept.
///
/// Equality and hashing agree on all three fields. The password never appears in `description`,
/// `debugDescription` or a `dump`, so a credential can be logged or interpolated without leaking it.
public struct Credential: Hashable, Sendable {
    /// The user name; a space holds at most one credential per user.
    public var user: String
    /// The secret.
    public var password: String
    /// The tier the credential is kept in.
    public var persistence: Persistence

    /// Creates a credential, kept on disk (``Persistence/permanent``) unless `persistence` says
    /// otherwise: what a credential store is for.
    public init(user: String, password: String, persistence: Persistence = .permanent) {
        self.user = user
        self.password = password
        self.persistence = persistence
    }
}

extension Credential: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `Credential(user: "alice", password: <redacted>, persistence: .permanent)`: never the password.
    public var description: String {
        "Credential(user: \(FieldRules.displayEscaped(String(reflecting: user))), password: <redacted>, persistence: .\(persistence.rawValue))"
    }

    /// The same text as ``description``, so `debugPrint` and `String(reflecting:)` hide the password too.
    public var debugDescription: String { description }

    /// The user and tier, with `<redacted>` for the password, so `dump` and debuggers never show it.
    public var customMirror: Mirror {
        Mirror(self, children: ["user": user, "password": "<redacted>", "persistence": persistence])
    }
}
