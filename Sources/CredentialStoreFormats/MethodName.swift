package import CredentialStore

/// The words for an authentication method, as `--method` and a netrc `# credstore:` line take them. `any` is `AuthenticationMethod.default`, which for password methods
/// means any of them; `default`, its earlier word, is still read and never printed.
package enum MethodName: String, CaseIterable, Sendable {
    case basic, digest, ntlm, negotiate, form, any, `default`

    /// The words that are printed and offered: every case but `default`.
    package static var allValueStrings: [String] { allCases.filter { $0 != .default }.map(\.rawValue) }

    package var authenticationMethod: AuthenticationMethod {
        switch self {
        case .basic: .httpBasic
        case .digest: .httpDigest
        case .ntlm: .ntlm
        case .negotiate: .negotiate
        case .form: .htmlForm
        case .any, .default: .default
        }
    }
}
