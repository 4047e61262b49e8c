import CredentialStore
import Foundation
import Logging
#if canImport(Glibc)
// `struct stat` is CoreFoundation's declaration once swift-nio's modules are in the build: the
// member-import check wants the module that declares it.
import CoreFoundation
import Glibc
#endif

/// Where the store and its key file are, and how to open them as docs/contract.md ("The command line") says: with the key file
/// by default, with a passphrase when the store's header says so.
struct StoreAccess {
    /// The database file.
    var databaseURL: URL
    /// The key file: `--key-file`, `CREDSTORE_KEY_FILE`, or `store.key` beside the database.
    var keyFileURL: URL
    /// Whether opening accepts the store as it is, once it opens with its key: an older copy put
    /// back, or another store put in its place (`init --force`).
    var acceptsStoreAsItIs = false

    init(store: String?, keyFile: String?, environment: [String: String]) {
        // Files, said so: otherwise Foundation stats each path to learn whether it is a folder.
        let database = store.map { URL(fileURLWithPath: $0, isDirectory: false) } ?? StoreLocation.standard(environment: environment).databaseURL
        let location = StoreLocation(databaseURL: database, keyFileURL: keyFile.map { URL(fileURLWithPath: $0, isDirectory: false) })
        (databaseURL, keyFileURL) = (location.databaseURL, location.keyFileURL)
    }

    /// The database file's path, for messages.
    var path: String { databaseURL.path }

    /// Whether anything, even a dangling link (which opening then refuses), is at the store's path.
    var storeExists: Bool { Self.exists(databaseURL) }

    /// Whether the store exists and is locked by a passphrase (its header says, without a key).
    func storeExistsAsPassphraseStore() throws -> Bool {
        guard storeExists else { throw CommandFailure(.notFound, "there is no store at \(path)") }
        return try StoreFile.protection(ofStoreAt: databaseURL) == .passphrase
    }

    private static func exists(_ url: URL) -> Bool {
        var info = stat()
        return lstat(url.path, &info) == 0
    }

    /// Opens the store, creating a key-file store on first use. When another process creates the
    /// store first, that one is opened, a passphrase store (`init --passphrase`) included.
    func openOrCreate(_ console: Console) throws -> CredentialStorage {
        if let storage = try openIfPresent(console) { return storage }
        do {
            return try CredentialStorage(at: databaseURL, key: .keyFile(keyFileURL), logger: Self.logger(console))
        } catch let error as CredentialStorageError where error.code == .wrongKey {
            // The store that won is locked with a passphrase: opened as every passphrase store is.
            guard (try? StoreFile.protection(ofStoreAt: databaseURL)) == .passphrase, let storage = try openIfPresent(console) else {
                throw error
            }
            return storage
        }
    }

    /// Opens an existing store; throws `failure` when there is none, rather than creating one as a
    /// side effect of a command that only reads.
    func openExisting(
        _ console: Console, integrityCheck: CredentialStorage.IntegrityCheck = .onOpen, orFail failure: @autoclosure () -> CommandFailure
    ) throws -> CredentialStorage {
        guard let storage = try openIfPresent(console, integrityCheck: integrityCheck) else { throw failure() }
        return storage
    }

    /// The existing store, opened; nil when there is none.
    ///
    /// A key-file store opens on the first try, without reading its header twice (this is the path
    /// of `credstore get`); a store that turns out to be locked by a passphrase is opened with
    /// `CREDSTORE_PASSPHRASE` or a prompt.
    func openIfPresent(_ console: Console, integrityCheck: CredentialStorage.IntegrityCheck = .onOpen) throws -> CredentialStorage? {
        guard storeExists else { return nil }
        let logger = Self.logger(console)
        do {
            if Self.exists(keyFileURL) {
                do {
                    return try open(.keyFile(keyFileURL), logger: logger, integrityCheck: integrityCheck)
                } catch let error as CredentialStorageError where error.code == .wrongKey {
                    guard try StoreFile.protection(ofStoreAt: databaseURL) == .passphrase else { throw error }
                }
            } else {
                // No key file: a passphrase store, unlocked in this session or not, or a key-file
                // store missing its key. The unlocked session first: it is `get`'s path then.
                do {
                    return try open(.unlockedSession, logger: logger, integrityCheck: integrityCheck)
                } catch CredentialStorageError.Code.locked {
                    return try openWithPassphraseOnly(console, logger: logger, integrityCheck: integrityCheck)
                } catch CredentialStorageError.Code.wrongKey {
                    // The library's error names the key file that is missing.
                    return try open(.keyFile(keyFileURL), logger: logger, integrityCheck: integrityCheck)
                }
            }
            return try openWithPassphrase(console, logger: logger, integrityCheck: integrityCheck)
        } catch let error as CredentialStorageError where error.code == .notFound {
            // The store is there but its key file is not: a key problem, not "nothing matched".
            throw CommandFailure(.noPermission, error.message)
        }
    }

    /// Opens a passphrase store unlocked in this session (`credstore unlock`: no passphrase, no key
    /// derivation), else with `CREDSTORE_PASSPHRASE`, else up to three prompts on a terminal.
    private func openWithPassphrase(
        _ console: Console, logger: Logger, integrityCheck: CredentialStorage.IntegrityCheck
    ) throws -> CredentialStorage {
        do {
            return try open(.unlockedSession, logger: logger, integrityCheck: integrityCheck)
        } catch CredentialStorageError.Code.locked {
            // Not unlocked (or the unlock went stale and is forgotten): the passphrase, as ever.
        }
        return try openWithPassphraseOnly(console, logger: logger, integrityCheck: integrityCheck)
    }

    /// Opens a passphrase store with `CREDSTORE_PASSPHRASE`, else up to three prompts on a terminal.
    ///
    /// A wrong passphrase is reported as it was asked for: the variable named, or the prompts
    /// counted; the library's advice for a wrong key (which names the key file too) fits neither.
    ///
    /// - Parameter command: the subcommand that needs the passphrase itself (`unlock`, `passwd`),
    ///   which an unlocked session does not serve; nil for a command that any unlock would serve.
    func openWithPassphraseOnly(
        _ console: Console, logger: Logger, integrityCheck: CredentialStorage.IntegrityCheck = .onOpen, for command: String? = nil
    ) throws -> CredentialStorage {
        if let passphrase = console.variable("CREDSTORE_PASSPHRASE") {
            do {
                return try open(.passphrase(passphrase), logger: logger, integrityCheck: integrityCheck)
            } catch CredentialStorageError.Code.wrongKey {
                throw CommandFailure(.noPermission, "the passphrase in CREDSTORE_PASSPHRASE does not unlock the store \(path); set it to the store's passphrase")
            }
        }
        guard console.secrets.isTerminal else {
            guard let command else {
                throw CommandFailure(.noPermission, "the store \(path) is locked with a passphrase; run `credstore unlock` on a terminal, set CREDSTORE_PASSPHRASE, or run credstore on a terminal to be asked for it")
            }
            throw CommandFailure(.noPermission, "`credstore \(command)` needs the passphrase of the store \(path); set CREDSTORE_PASSPHRASE, or run it on a terminal to be asked for it")
        }
        var attempt = 1
        while true {
            guard let passphrase = try console.secrets.readSecret(prompt: "Passphrase for \(path): "), !passphrase.isEmpty else {
                throw CommandFailure(.noPermission, "no passphrase was given; the store \(path) stays locked")
            }
            do {
                return try open(.passphrase(passphrase), logger: logger, integrityCheck: integrityCheck)
            } catch CredentialStorageError.Code.wrongKey {
                guard attempt < 3 else {
                    throw CommandFailure(.noPermission, "three passphrases did not unlock the store \(path); it stays locked")
                }
                console.errors.write("credstore: that passphrase does not unlock \(path); try again\n")
                attempt += 1
            }
        }
    }

    /// The existing store opened with `key`; accepted as it is when ``acceptsStoreAsItIs``.
    private func open(_ key: StoreKey, logger: Logger, integrityCheck: CredentialStorage.IntegrityCheck) throws -> CredentialStorage {
        if acceptsStoreAsItIs {
            return try StoreFile.accept(at: databaseURL, key: key, logger: logger)
        }
        return try CredentialStorage(at: databaseURL, key: key, logger: logger, integrityCheck: integrityCheck)
    }

    /// A logger that stays quiet: swift-log's default prints the library's info lines on stderr,
    /// where a script expects nothing or one error line. `CREDSTORE_LOG_LEVEL` turns it on.
    static func logger(_ console: Console) -> Logger {
        guard let level = console.variable("CREDSTORE_LOG_LEVEL").flatMap(Logger.Level.init(rawValue:)) else {
            return Logger(label: "credstore", factory: { _ in SwiftLogNoOpLogHandler() })
        }
        var logger = Logger(label: "credstore", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = level
        return logger
    }
}
