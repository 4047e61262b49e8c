import CredentialStoreCrypto

/// Where `credstore unlock` keeps what unlocks a passphrase store.
package enum SessionKeyring: String, CaseIterable, Sendable {
    /// This login session's keyring: the shell, and whatever it starts.
    case session
    /// The user's keyring: every session of the user on this machine.
    case user

    var kernel: KernelKeyring.Keyring { self == .session ? .session : .user }

    /// Whether this process cannot reach the keyring, so that a key kept there would be one no
    /// command of this session finds or removes: the user keyring under a session keyring that
    /// does not link it (`keyctl session`, some services).
    package var isOutOfReach: Bool { KernelKeyring.isOutOfReach(kernel) }
}
