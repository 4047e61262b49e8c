/// Searches by label and attribute go through blind indexes: each credential row has one tag row
/// per tag it carries (its label, each attribute with its value), keyed by the tag's blind index,
/// so that a search reads one B-tree range instead of opening every credential.
///
/// Tag rows are sealed like every other row: the seal tree groups them by tag, so that a search
/// proves it found every row of its tag and none more (docs/architecture.md, "The seal tree").
/// Which tags a row has is keyed (its label and attributes are sealed), so the library tags the
/// rows there are in the same transaction that applies this migration. The index by credential
/// finds a row's tags when the row is replaced or deleted.
let migration0010CredentialTags = SchemaMigration(identifier: "0010_credential_tags", sql: """
    CREATE TABLE credential_tags (
        tag_index BLOB NOT NULL,
        space_index BLOB NOT NULL,
        user_index BLOB NOT NULL,
        PRIMARY KEY (tag_index, space_index, user_index)
    ) WITHOUT ROWID;
    CREATE INDEX credential_tags_by_credential ON credential_tags (space_index, user_index);
    """)
