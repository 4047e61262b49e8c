import CredentialStoreCore

/// One space's default choice as a bundle carries it; a nil user is "no default".
struct BundleDefault: Hashable, Sendable {
    var space: ProtectionSpace
    var user: String?
    var stamp: HybridTimestamp
}
