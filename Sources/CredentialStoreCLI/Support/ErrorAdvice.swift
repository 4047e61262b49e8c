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
        case .wrongKey:
            "check CREDSTORE_PASSPHRASE or --key-file (CREDSTORE_KEY_FILE)"
        case .tamperDetected:
            "run `credstore verify` and restore the store from a backup; if you replaced the store on purpose, `credstore init --force` accepts it"
        case .corrupt:
            "run `credstore verify` and restore the store from a backup"
        case .synchronizableRemovalNeedsOption:
            "pass --synchronizable to confirm"
        case .bundleNotForThisStore:
            "on the machine that wrote it, run `credstore device trust` with this store's key (`credstore device show` here), then sync or export again"
        case .invalidInput where command == "device" || command == "export":
            "copy the device key from `credstore device show` on the other machine"
        case .invalidInput where command == "import":
            "set CREDSTORE_BUNDLE_PASSPHRASE, or run the import on a terminal to be asked"
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
    func messageWithAdvice(command: String?) -> String {
        guard let advice = code.advice(command: command), !message.hasSuffix(advice) else { return message }
        return message + "; " + advice
    }
}
