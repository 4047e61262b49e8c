import CredentialStoreCrypto
package import Testing

/// A suite or test trait: the passphrase stores and bundles made inside it derive their keys at
/// a token Argon2id cost (``Sodium/PasswordHashCost/forTests``) instead of the documented one.
///
/// The suites make hundreds of them, at a second and 256–512 MiB each; what they check does not
/// depend on the cost, which is read back from each slot and header whatever it is. The suites
/// that check the cost itself (`KeyDerivationCostTests`) do not use it, nor can anything outside
/// the package: the override is a `package` task-local (``Sodium/PasswordHashCost/overrideForNewKeys``).
package struct CheapKeyDerivation: TestTrait, SuiteTrait, TestScoping {
    package var isRecursive: Bool { true }

    package func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await Sodium.PasswordHashCost.$overrideForNewKeys.withValue(.forTests) {
            try await function()
        }
    }
}

extension Trait where Self == CheapKeyDerivation {
    /// Passphrase keys made inside the test derive at a token cost (see ``CheapKeyDerivation``).
    package static var cheapKeyDerivation: Self { CheapKeyDerivation() }
}
