import CredentialStore

extension CredentialStorageError.Code {
    /// What `credstore` adds to the library's message for this code: the command, flag or
    /// variable that fixes it. Nil where the library's own remedy is all there is to say.
    ///
    /// The library states what happened in its own terms (`RemovalOptions.removeSynchronizable`,
    /// "restore it from a backup"); it knows nothing of this command line. The advice lives here,
    /// next to ``exitCode``, so both are chosen by code in one place.
    ///
    /// - Parameter command: the subcommand that failed (`"device"`, `"import"` …), for the codes
    ///   whose fix depends on it.
    func advice(command: String?) -> String? {
        switch self {
        case .wrongKey where command == "import" || command == "sync":
            "check CREDSTORE_BUNDLE_PASSPHRASE, and the store's CREDSTORE_PASSPHRASE or --key-file"
        case .wrongKey where command == "restore":
            "check CREDSTORE_BACKUP_PASSPHRASE: the passphrase the backup was written with"
        case .wrongKey:
            "check CREDSTORE_PASSPHRASE or --key-file (CREDSTORE_KEY_FILE)"
        case .locked:
            "run `credstore unlock` (it asks for the passphrase once), or set CREDSTORE_PASSPHRASE"
        case .tamperDetected, .corrupt:
            // What the store's own failures call for depends on what happened: see `storeAdvice`.
            nil
        case .synchronizableRemovalNeedsOption:
            "pass --synchronizable to confirm"
        case .bundleNotForThisStore where command == "sync":
            // `sync` seals to the devices its store trusts: exporting again changes nothing there.
            "on the machine that wrote it, run `credstore device trust` with this store's key (`credstore device show` here), then `credstore sync` there"
        case .bundleNotForThisStore:
            "on the machine that wrote it, give this store's key (`credstore device show` here) to `credstore export --recipient`, or to `credstore device trust` before `credstore sync`"
        case .invalidInput where command == "device" || command == "export":
            "copy the device key from `credstore device show` on the other machine"
        case .notFound where command == "device":
            "`credstore device list` shows the devices this store trusts"
        case .unsupportedFormatVersion:
            "upgrade credstore"
        default:
            nil
        }
    }
}

extension CredentialStorageError {
    /// The library's message with the command line's advice for its code, as `credstore` prints it.
    ///
    /// - Parameter thisDevice: this store's device key, when the command has it at hand: the
    ///   advice for a bundle not sealed to this store then names it, ready to paste on the other
    ///   machine.
    /// - Parameter bundle: the bundle's path, when a shared folder holds it (`sync`): a bundle
    ///   of a device no longer trusted here is then a retired device's, which the note says how
    ///   to clear away.
    func messageWithAdvice(command: String?, thisDevice: DeviceKey? = nil, bundle: String? = nil) -> String {
        // A revoked recipient is no mistyped key: copying the key again would not help.
        if code == .invalidInput, command == "export", message.contains(" was revoked (by ") {
            return message + "; if revoking it was a mistake, run `credstore device trust` with that key here first"
        }
        if code == .bundleNotForThisStore, namesRevokedSigner {
            // A revocation is undone only on purpose, machine by machine.
            var advice = "its bundles stay refused; only `credstore device trust` with that key, run here, brings it back"
            if let bundle { advice += "; if the device is retired, delete \(bundle)" }
            return message + "; " + advice
        }
        if code == .bundleNotForThisStore, namesUntrustedSigner {
            // The fix is here, not on the other machine: the library's message names the signer's key.
            var advice = "if that device is yours, run `credstore device trust` with that key here, then `credstore \(command ?? "import")` again"
            if let bundle {
                advice += "; if it is retired (an old install), delete \(bundle) and run `credstore device untrust` with that key on every machine that still trusts it"
            }
            return message + "; " + advice
        }
        if let advice = lostDatabaseAdvice { return message + "; " + advice }
        if let advice = storeAdvice(command: command) { return withoutLibraryRemedy + "; " + advice }
        guard var advice = code.advice(command: command), !message.hasSuffix(advice) else { return message }
        if code == .bundleNotForThisStore, command == "sync", let thisDevice {
            advice = "on the machine that wrote it, run `credstore device trust \(thisDevice)` (this store's key), then `credstore sync` there"
            // The machine that wrote it may be no more: an old install, reinstalled since.
            if let bundle { advice += "; if that device is retired (an old install), delete \(bundle)" }
        }
        return message + "; " + advice
    }

    /// For a store whose database is empty, or gone with its WAL left behind (the library's
    /// `corrupt` says "credstore creates a store whole"): `verify` cannot open it either, so the
    /// advice is how to start afresh. FirstUseRaceCommandTests reads both messages from the binary.
    private var lostDatabaseAdvice: String? {
        guard code == .corrupt, message.contains("credstore creates a store whole") else { return nil }
        let file = message.contains("its WAL is not") ? "that WAL" : "that empty file"
        return "to start a new store instead, `rm` \(file) and run `credstore init` (with --passphrase for a passphrase store)"
    }

    /// The advice for a store that fails its checks (`tamperDetected`, `corrupt`), by what the
    /// library's message says happened, so that the command it names works there: `init --force`
    /// accepts an older copy put back or another store put in place (and nothing else: a row
    /// altered stays altered); `verify` reports altered rows, but refuses, as every command does,
    /// a store it cannot open (damaged, an edited schema) and so is not named for those; a
    /// backup that `restore` refused calls for another backup. StoreAdviceCommandTests runs each
    /// advised command in the situation that prints it, so a change of wording fails them.
    private func storeAdvice(command: String?) -> String? {
        guard code == .tamperDetected || code == .corrupt else { return nil }
        let restore = "`credstore restore FILE` puts back a backup that `credstore backup` wrote"
        if command == "restore" {
            return "restore another backup; the store was left as it was"
        }
        if message.contains("it was rolled back to an older copy") {
            return "if you put the older copy back on purpose, `credstore init --force` accepts it; otherwise \(restore)"
        }
        if message.contains("so it was replaced") {
            return "if you put this store there on purpose, `credstore init --force` accepts it; otherwise put your own back: \(restore)"
        }
        if code == .corrupt || message.contains("schema") || command == "verify" {
            return "restore the store from a backup: \(restore)"
        }
        return "run `credstore verify` to see every problem, and restore the store from a backup: \(restore)"
    }

    /// The library's remedies for a store that fails its checks, in its own terms (an API to
    /// call, "restore it from a backup"), which ``storeAdvice(command:)`` words as commands.
    private static let libraryRemedies = [
        ". If you put the older copy back on purpose, accept it (StoreFile.accept(at:key:)); otherwise restore your store from a backup",
        ". If it was replaced on purpose, accept it (StoreFile.accept(at:key:)); otherwise restore your own store",
        "; verify the store and restore it from a backup",
        "; restore the store from a backup",
        "; restore it from a backup",
    ]

    /// The message without the library's remedy, which the command line's advice replaces.
    private var withoutLibraryRemedy: String {
        for remedy in Self.libraryRemedies where message.hasSuffix(remedy) {
            return String(message.dropLast(remedy.count))
        }
        return message
    }

    /// Whether a `bundleNotForThisStore` says the bundle's signer is not trusted here (rather than
    /// that the bundle was not sealed to this store): the library's one code covers both, and only
    /// the second is fixed on the machine that wrote the bundle. SyncCommandTests and
    /// ExitCodesTests read both messages from real bundles, so a change of wording fails them.
    private var namesUntrustedSigner: Bool { message.contains("signed by a device this store does not trust") }
    private var namesRevokedSigner: Bool { message.contains("signed by a revoked device") }
}
