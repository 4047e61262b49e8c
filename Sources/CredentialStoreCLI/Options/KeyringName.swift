import ArgumentParser
import CredentialStore
import Foundation

/// The `--keyring` words.
enum KeyringName: String, CaseIterable, ExpressibleByArgument {
    case session, user

    var keyring: SessionKeyring { self == .session ? .session : .user }
}
