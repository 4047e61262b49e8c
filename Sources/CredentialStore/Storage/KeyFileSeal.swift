import CredentialStoreCrypto

/// What seals a key file to the machine it is on.
public enum KeyFileSeal: String, Sendable, Hashable, CaseIterable {
    /// `systemd-creds encrypt`: with the machine's TPM2 and its host key where it has a TPM2, with
    /// the host key (`/var/lib/systemd/credential.secret`, root's only) where it has not.
    case systemdCreds = "systemd-creds"

    /// The tool that seals and unseals with this kind.
    var sealer: SystemdCreds {
        switch self {
        case .systemdCreds: .system
        }
    }
}
