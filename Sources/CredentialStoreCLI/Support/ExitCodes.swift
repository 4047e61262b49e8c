package import ArgumentParser
import CredentialStore

/// The exit statuses of `credstore`, from sysexits(3), as docs/contract.md ("The command line") lists them.
extension ExitCode {
    /// Nothing matched: no such credential, no such store.
    package static let notFound = ExitCode(1)
    /// The command line is wrong, or lacks a flag this case requires (EX_USAGE).
    package static let usage = ExitCode(64)
    /// The input is not valid data: a malformed URL, an empty password, an ambiguous match (EX_DATAERR).
    package static let dataError = ExitCode(65)
    /// A store file could not be read or written, or is damaged (EX_IOERR).
    package static let ioError = ExitCode(74)
    /// The key does not unlock the store, a row was tampered with, or a file is open to others (EX_NOPERM).
    package static let noPermission = ExitCode(77)
    /// What the command needs from the system is missing: `systemd-creds`, the kernel keyring (EX_UNAVAILABLE).
    package static let unavailable = ExitCode(69)
    /// The only credential that would answer has expired: renewing it lets the same command
    /// succeed (EX_TEMPFAIL).
    package static let expired = ExitCode(75)
}

extension CredentialStorageError.Code {
    /// The exit status a command ends with when the library throws this code.
    ///
    /// `ambiguousMatch` is a data error (65), not "nothing matched" (1): a script that reads 1 as
    /// "no credential yet" would ask for a password and add one more credential, while the fix is
    /// to name the realm. `synchronizableRemovalNeedsOption` is a usage error (64): the command
    /// needs `--synchronizable` to go ahead.
    package var exitCode: ExitCode {
        switch self {
        case .notFound: .notFound
        case .synchronizableRemovalNeedsOption: .usage
        case .invalidProtectionSpace, .invalidInput, .invalidBundle, .bundleTooOld, .ambiguousMatch: .dataError
        case .wrongKey, .locked, .tamperDetected, .permissionsTooOpen, .bundleNotForThisStore: .noPermission
        case .corrupt, .io, .unsupportedFormatVersion: .ioError
        case .unavailable: .unavailable
        default: .ioError
        }
    }
}
