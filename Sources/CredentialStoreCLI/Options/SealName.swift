import ArgumentParser
import CredentialStore
import Foundation

/// The tools `init --seal-with` takes: the library's ``KeyFileSeal`` by its command-line name.
enum SealName: String, CaseIterable, ExpressibleByArgument {
    case systemdCreds = "systemd-creds"

    var seal: KeyFileSeal {
        switch self {
        case .systemdCreds: .systemdCreds
        }
    }
}
