import CredentialStore

extension ListCommand {
    /// What a listed credential is, by its space's method: `list` shows each kind in its own table,
    /// and `--json` says it in `kind`.
    enum Kind: String {
        case password, identity, serverTrust

        init(_ entry: CredentialEntry) {
            switch entry.space.authenticationMethod {
            case .clientCertificate: self = .identity
            case .serverTrust: self = .serverTrust
            default: self = .password
            }
        }
    }
}
