import CSodium

extension Sodium.PasswordHashCost {
    /// A cost for tests: two passes over 16 KiB, microseconds where the documented ones take a
    /// second. One step above libsodium's minimum (one pass over 8 KiB), so that a test can still
    /// lower what a slot records, as an attacker editing the file would.
    package static let forTests = Sodium.PasswordHashCost(
        opsLimit: UInt64(crypto_pwhash_OPSLIMIT_MIN) + 1, memLimit: Int(crypto_pwhash_MEMLIMIT_MIN) * 2)

    /// A cost that replaces the documented ones for the passphrase keys made inside this task and
    /// its child tasks; nil (the default) everywhere else.
    ///
    /// It exists so that the test suites, which make hundreds of passphrase stores and bundles,
    /// do not spend a second and 256–512 MiB on each. It is `package` and task-local on purpose:
    /// no public API, environment variable or file can reach it, so a program built on the
    /// library always derives at the documented cost, and a test that does not ask for it does too.
    /// Only new keys are affected: an unlock derives at the cost its slot or header records.
    @TaskLocal package static var overrideForNewKeys: Sodium.PasswordHashCost?

    /// The cost of a new store passphrase slot (a store, a backup, `passwd`): MODERATE.
    package static var forNewStoreKey: Sodium.PasswordHashCost { overrideForNewKeys ?? .moderate }

    /// The cost of a new passphrase bundle: ``Sodium/bundlePasswordCost``.
    package static var forNewBundleKey: Sodium.PasswordHashCost { overrideForNewKeys ?? Sodium.bundlePasswordCost }
}
