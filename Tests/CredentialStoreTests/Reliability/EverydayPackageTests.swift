import CredentialStoreTestSupport
import Foundation
import Testing

/// The program of `Harnesses/NewUser` named `Everyday`, a package outside this one that depends on
/// the `CredentialStore` product by path, built by `.ci/new-user` (which sets
/// `CREDSTORE_EVERYDAY_EXECUTABLE`): what everyday use must never lose, seen as an app sees it.
private let everydayExecutable = ProcessInfo.processInfo.environment["CREDSTORE_EVERYDAY_EXECUTABLE"].map { URL(fileURLWithPath: $0) }

@Suite(.enabled(if: everydayExecutable != nil, "run .ci/new-user, which builds Harnesses/NewUser's Everyday"))
struct EverydayPackageTests {
    @Test func everydayUseLosesNothingThroughTheLibrary() throws {
        let store = try TemporaryStore()
        let result = try runProcess(try #require(everydayExecutable), [store.directory.deletingLastPathComponent().path], timeout: .seconds(300))
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(result.status == 0 && !result.killedBySignal, "\(result.stdout)\(result.stderr)")
        #expect(!lines.isEmpty && lines.allSatisfy { $0.hasPrefix("ok ") }, "\(lines)")
        for name in ["a-new-password-keeps-tier-and-details", "leaving-sync-needs-consent", "update-changes-details-without-the-password",
                     "first-use-from-many-threads",
                     "an-expired-credential-is-no-default-and-the-listing-agrees", "a-backup-restores-whole-into-a-new-place",
                     "an-expiry-out-of-range-is-refused", "a-url-that-hides-its-host-is-refused"] {
            #expect(lines.contains("ok \(name)"), "\(name) did not run: \(lines)")
        }
    }
}
