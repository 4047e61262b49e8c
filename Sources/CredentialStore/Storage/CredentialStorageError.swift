public import Foundation

/// The one error type of credstore: a ``Code`` to branch on and a message that says what to do.
///
/// Messages never contain a password, a key or a passphrase. Catch by code:
///
/// ```swift
/// do {
///     storage = try CredentialStorage(at: url, key: .passphrase(input))
/// } catch CredentialStorageError.Code.wrongKey {
///     // ask again
/// }
/// ```
public struct CredentialStorageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, for code to branch on.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// The key file or passphrase does not unlock this store.
        case wrongKey
        /// The store's header or database structure is damaged.
        case corrupt
        /// A row, or a value bound to it, was changed outside credstore.
        case tamperDetected
        /// A store file is readable by group or others, is a symbolic link, or is not a regular file.
        case permissionsTooOpen
        /// Nothing matched, or a file the store needs does not exist.
        case notFound
        /// A synchronizable credential was removed without ``RemovalOptions/removeSynchronizable``.
        case synchronizableRemovalNeedsOption
        /// The protection space cannot key a credential (no host, bad port …).
        case invalidProtectionSpace
        /// A sync bundle is malformed, truncated or fails authentication.
        case invalidBundle
        /// A sync bundle was made for another store or signed by a device this store does not trust.
        case bundleNotForThisStore
        /// A store or bundle was written by a newer format than this build reads.
        case unsupportedFormatVersion
        /// Several protection spaces match a request and none is preferred.
        case ambiguousMatch
        /// Reading or writing a store file failed (disk full, I/O error, database locked too long).
        case io
    }

    /// What went wrong.
    public let code: Code
    /// One sentence that says what happened and what to do.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

extension CredentialStorageError.Code {
    /// Lets `catch CredentialStorageError.Code.wrongKey` match by code.
    public static func ~= (code: Self, error: any Error) -> Bool {
        (error as? CredentialStorageError)?.code == code
    }
}

extension CredentialStorageError: LocalizedError {
    public var errorDescription: String? { message }
}
