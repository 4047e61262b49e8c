extension Credential {
    /// Checks the user name and password against ``FieldRules`` and `space` against the space
    /// rules: the one check the storage's `set` paths and a sync import make.
    ///
    /// - Throws: ``CredentialStorageError/Code/invalidInput`` for a CR, LF or NUL in any field or
    ///   a user or password over its length limit, ``CredentialStorageError/Code/invalidProtectionSpace``
    ///   for a space a store cannot key.
    package func validate(in space: ProtectionSpace) throws {
        try Self.validate(user: user, password: password)
        if hasDetails { try validateDetails() }
        try space.validate()
    }

    /// The longest label, and the longest attribute name, in UTF-8 bytes.
    package static let maximumLabelBytes = 4096
    package static let maximumAttributeNameBytes = 1024
    /// The most attributes one credential carries.
    package static let maximumAttributeCount = 256
    /// Every expiry credstore keeps, in seconds since 1970: 1970-01-01T00:00:00Z through
    /// 9999-12-31T23:59:59Z, a range every date conversion and every calendar reaches.
    package static let expiryRange: ClosedRange<Int64> = 0...253_402_300_799

    /// Checks the fields beyond user and password: refresh token, label, attribute names and
    /// values are single lines; a comment may hold line breaks but no NUL; an attribute name is
    /// not empty and holds no `=` (`NAME=VALUE` is how the CLI and search name one); and all of
    /// them with the password fit in one sync bundle item, as the password alone must.
    ///
    /// - Throws: ``CredentialStorageError/Code/invalidInput``, naming the field, never its value.
    /// Whether the expiry, if any, is within ``expiryRange``.
    package var hasExpiryInRange: Bool {
        expiresEpochSeconds.map(Self.expiryRange.contains) ?? true
    }

    package func validateDetails() throws {
        if !hasExpiryInRange {
            throw CredentialStorageError(.invalidInput, "the expiry is outside 1970-01-01T00:00:00Z through 9999-12-31T23:59:59Z; it was refused")
        }
        if let refreshToken { try FieldRules.checkLineSafe(refreshToken, field: "refresh token") }
        if let label {
            try FieldRules.checkLineSafe(label, field: "label")
            guard label.utf8.count <= Self.maximumLabelBytes else {
                throw CredentialStorageError(.invalidInput, "the label is longer than \(Self.maximumLabelBytes) bytes; it was refused")
            }
        }
        if let comment, comment.utf8.contains(0) {
            throw CredentialStorageError(.invalidInput, "the comment holds a NUL byte; it was refused")
        }
        guard attributes.count <= Self.maximumAttributeCount else {
            throw CredentialStorageError(.invalidInput, "a credential carries at most \(Self.maximumAttributeCount) attributes; it was refused")
        }
        for (name, value) in attributes {
            try FieldRules.checkLineSafe(name, field: "attribute name")
            try FieldRules.checkLineSafe(value, field: "value of an attribute")
            guard !name.isEmpty, !name.contains("="), name.utf8.count <= Self.maximumAttributeNameBytes else {
                throw CredentialStorageError(.invalidInput, "an attribute name must be 1 to \(Self.maximumAttributeNameBytes) bytes without `=`; it was refused")
            }
        }
        var total = password.utf8.count + (refreshToken?.utf8.count ?? 0) + (label?.utf8.count ?? 0) + (comment?.utf8.count ?? 0)
        for (name, value) in attributes { total += name.utf8.count + value.utf8.count }
        guard total <= Self.maximumPasswordBytes else {
            throw CredentialStorageError(.invalidInput, "the password, refresh token, label, comment and attributes together are longer than \(Self.maximumPasswordBytes) bytes, more than a sync bundle carries; it was refused")
        }
    }

    /// The longest user name, in UTF-8 bytes, as long as the longest realm.
    package static let maximumUserBytes = 4096
    /// The longest password, in UTF-8 bytes: with the longest host, realm and user it still fits
    /// in one sync bundle item (1 MiB), so a credential the store takes can always be exported
    /// and synced.
    package static let maximumPasswordBytes = 1_000_000

    /// Checks a user name and, when there is one, a password (a sync deletion carries none).
    package static func validate(user: String?, password: String?) throws {
        if let user {
            try FieldRules.checkLineSafe(user, field: "user name")
            guard user.utf8.count <= maximumUserBytes else {
                throw CredentialStorageError(.invalidInput, "the user name is longer than \(maximumUserBytes) bytes; it was refused")
            }
        }
        if let password {
            try FieldRules.checkLineSafe(password, field: "password")
            guard password.utf8.count <= maximumPasswordBytes else {
                throw CredentialStorageError(.invalidInput, "the password is longer than \(maximumPasswordBytes) bytes, more than a sync bundle carries; it was refused")
            }
        }
    }
}
