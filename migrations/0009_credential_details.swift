/// Credentials carry details (expiry, refresh token, label, comment, attributes), sealed with the
/// user and password in the row's one ciphertext: no column changes, and a row written before
/// reads as a credential without details.
///
/// What the migration does is keyed, so the library does it in the same transaction that records
/// this one (docs/architecture.md, "Credential details"): it folds the git helper's hidden
/// companions — credentials in a space of protocol `git-credential-meta+PROTO` whose password held
/// `password_expiry_utc` and `oauth_refresh_token` — into the credentials they belong to, and
/// removes them.
let migration0009CredentialDetails = SchemaMigration(identifier: "0009_credential_details", sql: """
    SELECT 1;
    """)
