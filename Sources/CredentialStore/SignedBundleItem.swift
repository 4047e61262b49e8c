package import CredentialStoreCore

/// One credential of a bundle written with ``CredentialStorage/writeSignedBundle(items:defaults:created:recipients:itemLimit:to:)``,
/// stamped by the writing store's device at the clock reading given.
///
/// `package`, not public: the test targets and the harnesses forge bundles that an export never
/// writes (old or future stamps, invalid fields, tens of thousands of items at once) without
/// reaching into the sync engine's internals.
package struct SignedBundleItem: Hashable, Sendable {
    package var space: ProtectionSpace
    package var user: String
    /// The password; nil is a deletion (a tombstone).
    package var password: String?
    /// The stamp's wall clock, in milliseconds since 1970, and its counter.
    package var wall: Int64
    package var counter: Int64

    package init(space: ProtectionSpace, user: String, password: String?, wall: Int64, counter: Int64 = 0) {
        self.space = space
        self.user = user
        self.password = password
        self.wall = wall
        self.counter = counter
    }
}
