package import CredentialStoreCore
public import Foundation

/// One stored credential as `list` shows it: where, who, which tier, whether it is the default,
/// and when — never the password.
public struct CredentialEntry: Hashable, Sendable, Codable {
    /// The protection space.
    public var space: ProtectionSpace
    /// The user.
    public var user: String
    /// The tier.
    public var persistence: Persistence
    /// Whether ``CredentialStorage/defaultCredential(for:)`` of its space returns
    /// this credential: it is the space's default (the one chosen as default, else the space's
    /// only credential) and has not expired. An expired default is no default; ``isExpired(at:)``
    /// says since when.
    public var isDefault: Bool
    /// Whether the space's default rule names this credential, expired or not: what says that a
    /// space's default has expired, rather than that it has none. An entry decoded from JSON
    /// knows only ``isDefault``.
    package var isDefaultEvenIfExpired: Bool
    /// When the credential was first stored; nil for session credentials.
    public var created: Date?
    /// When it last changed; nil for session credentials.
    public var modified: Date?
    /// When its password expires (``/CredentialStoreCore/Credential/expires``).
    public var expires: Date?
    /// Its label (``/CredentialStoreCore/Credential/label``).
    public var label: String?
    /// Its comment (``/CredentialStoreCore/Credential/comment``).
    public var comment: String?
    /// Its attributes (``/CredentialStoreCore/Credential/attributes``).
    public var attributes: [String: String] = [:]
    /// Whether it carries a refresh token (never the token: an entry holds no secret).
    public var hasRefreshToken = false

    /// Whether its password has expired at `date`.
    public func isExpired(at date: Date = Date()) -> Bool {
        Credential.hasPassed(expires.map(Credential.wholeSeconds), at: Credential.wholeSeconds(date))
    }

    /// Records whether the space's default rule names this credential; it is the default unless
    /// it has expired at `seconds` (since 1970, the store's clock).
    mutating func settleDefault(chosen: Bool, at seconds: Int64) {
        isDefaultEvenIfExpired = chosen
        isDefault = chosen && !Credential.hasPassed(expires.map(Credential.wholeSeconds), at: seconds)
    }

    init(space: ProtectionSpace, user: String, persistence: Persistence, isDefault: Bool, created: Date?, modified: Date?, details: Credential? = nil) {
        self.space = space
        self.user = user
        self.persistence = persistence
        self.isDefault = isDefault
        self.isDefaultEvenIfExpired = isDefault
        self.created = created
        self.modified = modified
        if let details {
            expires = details.expires
            label = details.label
            comment = details.comment
            attributes = details.attributes
            hasRefreshToken = details.refreshToken != nil
        }
    }

    private enum CodingKeys: String, CodingKey {
        case space, user, persistence, isDefault, created, modified, expires, label, comment, attributes, hasRefreshToken
    }

    /// Decodes an entry; one encoded before entries had details decodes without them.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        space = try container.decode(ProtectionSpace.self, forKey: .space)
        user = try container.decode(String.self, forKey: .user)
        persistence = try container.decode(Persistence.self, forKey: .persistence)
        isDefault = try container.decode(Bool.self, forKey: .isDefault)
        isDefaultEvenIfExpired = isDefault
        created = try container.decodeIfPresent(Date.self, forKey: .created)
        modified = try container.decodeIfPresent(Date.self, forKey: .modified)
        expires = try container.decodeIfPresent(Date.self, forKey: .expires)
        label = try container.decodeIfPresent(String.self, forKey: .label)
        comment = try container.decodeIfPresent(String.self, forKey: .comment)
        attributes = try container.decodeIfPresent([String: String].self, forKey: .attributes) ?? [:]
        hasRefreshToken = try container.decodeIfPresent(Bool.self, forKey: .hasRefreshToken) ?? false
    }
}
