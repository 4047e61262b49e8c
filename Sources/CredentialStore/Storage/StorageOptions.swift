public import Logging

/// How ``CredentialStorage/init(at:key:options:)`` opens a store, beyond where it is and its key.
public struct StorageOptions: Sendable {
    /// Where the store logs what it did and declined (never a secret).
    public var logger: Logger
    /// What opening checks of the table seal.
    public var integrityCheck: CredentialStorage.IntegrityCheck
    /// Where the newest state seen of the store is recorded, so that an older copy put back is
    /// refused.
    public var rollbackAnchor: RollbackAnchor

    /// Options with each one given, or its default: a logger labelled `credstore`, the seal
    /// checked at open, and the standard rollback anchor.
    public init(
        logger: Logger = Logger(label: "credstore"),
        integrityCheck: CredentialStorage.IntegrityCheck = .onOpen,
        rollbackAnchor: RollbackAnchor = .standard
    ) {
        self.logger = logger
        self.integrityCheck = integrityCheck
        self.rollbackAnchor = rollbackAnchor
    }
}
