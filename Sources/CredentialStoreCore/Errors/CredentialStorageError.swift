public import Foundation

/// The one error type of credstore: a ``Code`` to branch on and a message that says what happened.
///
/// A message states the fact and a generic remedy in the library's terms ("restore it from a
/// backup", "confirm with `RemovalOptions.removeSynchronizable`"); it never names a command line,
/// which an application words for itself by code, as the `credstore` CLI does. Messages never
/// contain a password, a key or a passphrase. Catch by code:
///
/// ```swift
/// do {
///     storage = try CredentialStorage(at: StoreLocation(databaseURL: url), key: .passphrase(input))
/// } catch CredentialStorageError.Code.wrongKey {
///     // ask again
/// }
/// ```
public struct CredentialStorageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, for code to branch on.
    ///
    /// A struct of constants rather than an enum (as GRDB's `ResultCode`), so that a code works as
    /// a `catch` pattern against any error and new codes can come without breaking a `switch`.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, e.g. `"wrongKey"`.
        public let rawValue: String

        /// Creates a code from its name.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The code's name, as `rawValue` holds it (`"wrongKey"`).
        public var description: String { rawValue }

        /// The key file or passphrase does not unlock this store.
        public static let wrongKey = Code(rawValue: "wrongKey")
        /// The store's header or database structure is damaged.
        public static let corrupt = Code(rawValue: "corrupt")
        /// A row, or a value bound to it, was changed outside credstore.
        public static let tamperDetected = Code(rawValue: "tamperDetected")
        /// A store file is readable by group or others, is a symbolic link, or is not a regular file.
        public static let permissionsTooOpen = Code(rawValue: "permissionsTooOpen")
        /// Nothing matched, or a file the store needs does not exist.
        public static let notFound = Code(rawValue: "notFound")
        /// A synchronizable credential was removed without `RemovalOptions.removeSynchronizable`.
        public static let synchronizableRemovalNeedsOption = Code(rawValue: "synchronizableRemovalNeedsOption")
        /// The protection space cannot key a credential (no host, bad port …).
        public static let invalidProtectionSpace = Code(rawValue: "invalidProtectionSpace")
        /// A sync bundle is malformed, truncated or fails authentication.
        public static let invalidBundle = Code(rawValue: "invalidBundle")
        /// A sync bundle was made for another store or signed by a device this store does not trust.
        public static let bundleNotForThisStore = Code(rawValue: "bundleNotForThisStore")
        /// A store or bundle was written by a newer format than this build reads.
        public static let unsupportedFormatVersion = Code(rawValue: "unsupportedFormatVersion")
        /// Several protection spaces match a request and none is preferred.
        public static let ambiguousMatch = Code(rawValue: "ambiguousMatch")
        /// Reading or writing a store file failed (disk full, I/O error, database locked too long).
        public static let io = Code(rawValue: "io")
        /// Input that is not a valid value: a malformed URL, a user name with a line break …
        public static let invalidInput = Code(rawValue: "invalidInput")
        /// A passphrase store opened with ``StoreKey/unlockedSession`` is not unlocked in this
        /// session: never unlocked, locked again, expired, or unlocked before its passphrase or
        /// key changed.
        public static let locked = Code(rawValue: "locked")
        /// What the operation needs from the system is not there or not allowed: the kernel
        /// keyring, or `systemd-creds` for a sealed key file.
        public static let unavailable = Code(rawValue: "unavailable")
    }

    /// What went wrong.
    public let code: Code
    /// One sentence that says what happened and, where there is one, a generic remedy.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The ``message`` alone, without the code: the one line a command prints on failure.
    public var description: String { message }
}

extension CredentialStorageError.Code {
    /// Lets `catch CredentialStorageError.Code.wrongKey` match by code.
    public static func ~= (code: Self, error: any Error) -> Bool {
        (error as? CredentialStorageError)?.code == code
    }
}

extension CredentialStorageError: LocalizedError {
    /// The ``message``, so `localizedDescription` says what happened rather than naming the type.
    public var errorDescription: String? { message }
}
