/// The files of other stores `credstore import --from` reads.
package enum ImportFormat: String, CaseIterable, Sendable {
    /// git-credential-store's `~/.git-credentials`: one `scheme://user:password@host[:port][/path]` a line.
    case gitCredentials = "git-credentials"
    /// KeePassXC's CSV export: `"Group","Title","Username","Password","URL","Notes"…`.
    case keepassxc
    /// Bitwarden's CSV export: `folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp`.
    case bitwarden
    /// Chrome's and Chromium's CSV export: `name,url,username,password[,note]`.
    case chrome

    /// The name a person knows the file by.
    package var title: String {
        switch self {
        case .gitCredentials: "git-credentials file"
        case .keepassxc: "KeePassXC export"
        case .bitwarden: "Bitwarden export"
        case .chrome: "Chrome export"
        }
    }
}
