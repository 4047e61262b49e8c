import ArgumentParser
import CredentialStore

/// The `--proxy` words.
enum ProxyName: String, CaseIterable, ExpressibleByArgument {
    case http, https, socks

    var proxyType: ProxyType {
        switch self {
        case .http: .http
        case .https: .https
        case .socks: .socks
        }
    }
}
