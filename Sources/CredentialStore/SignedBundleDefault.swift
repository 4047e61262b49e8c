package import CredentialStoreCore

/// One default choice of a bundle written with ``CredentialStorage/writeSignedBundle(items:defaults:created:recipients:itemLimit:to:)``;
/// a nil user is "no default".
package struct SignedBundleDefault: Hashable, Sendable {
    package var space: ProtectionSpace
    package var user: String?
    package var wall: Int64
    package var counter: Int64

    package init(space: ProtectionSpace, user: String?, wall: Int64, counter: Int64 = 0) {
        self.space = space
        self.user = user
        self.wall = wall
        self.counter = counter
    }
}
