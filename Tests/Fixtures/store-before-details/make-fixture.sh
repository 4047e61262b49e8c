#!/usr/bin/env bash
# Writes the store in this folder with the credstore of commit d83336d (main before credentials had
# details), whose git helper kept password_expiry_utc and oauth_refresh_token in hidden
# companion credentials (protocol git-credential-meta+PROTO). The test that opens it with today's
# code: Tests/CredentialStoreTests/Storage/CredentialDetailsMigrationTests.swift.
#
#   git worktree add /tmp/old d83336d && (cd /tmp/old && swift build --product credstore)
#   Tests/Fixtures/store-before-details/make-fixture.sh /tmp/old/.build/debug/credstore
set -euo pipefail
OLD=$1
cd "$(dirname "$0")"
rm -f credentials.db credentials.db-wal credentials.db-shm store.key
export HOME=$(mktemp -d) XDG_STATE_HOME=$(mktemp -d)
store=(--store "$PWD/credentials.db" --key-file "$PWD/store.key")
git_store() { printf '%s\n\n' "$1" | "$OLD" git-credential "${store[@]}" store; }
"$OLD" init "${store[@]}" >/dev/null 2>&1 || true
# An OAuth token with a future expiry and a refresh token with characters the companion percent-encoded.
git_store $'protocol=https\nhost=git.example.com\nusername=alice\npassword=gho_alice_token\npassword_expiry_utc=2000000000\noauth_refresh_token=rt/alice+=&%x'
# An expired one, per repository (credential.useHttpPath: the realm is git:PATH), on another port.
git_store $'protocol=https\nhost=git.example.com:8443\npath=org/repo.git\nusername=bob\npassword=gho_bob_token\npassword_expiry_utc=1700000000\noauth_refresh_token=rt-bob'
# A plain credential: nothing to fold.
git_store $'protocol=https\nhost=other.example.org\nusername=carol\npassword=carol-pw'
# A synchronizable credential that git then approved with an expiry: its companion is synchronizable too.
printf 'dave-token\n' | "$OLD" add https://sync.example.com --user dave --persistence synchronizable "${store[@]}" >/dev/null
git_store $'protocol=https\nhost=sync.example.com\nusername=dave\npassword=dave-token\npassword_expiry_utc=2100000000'
# A companion whose credential was removed by hand (`credstore remove` leaves the companion).
git_store $'protocol=https\nhost=orphan.example.com\nusername=eve\npassword=eve-pw\noauth_refresh_token=rt-eve'
"$OLD" remove https://orphan.example.com --user eve "${store[@]}" >/dev/null
"$OLD" list "${store[@]}"
# One file: the WAL checkpointed into the database.
sqlite3 credentials.db 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
rm -f credentials.db-wal credentials.db-shm
