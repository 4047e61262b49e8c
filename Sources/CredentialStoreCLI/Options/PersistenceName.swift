import ArgumentParser
import CredentialStore

/// The `--persistence` words: the tiers that outlive the `credstore` process.
enum PersistenceName: String, CaseIterable, ExpressibleByArgument {
    case permanent, synchronizable

    var persistence: Persistence {
        switch self {
        case .permanent: .permanent
        case .synchronizable: .synchronizable
        }
    }
}
