import CredentialStoreTestSupport
import Foundation
import Testing

/// The fuzz targets (Harnesses/credstore-fuzz), built plainly and run as the deterministic
/// mutation loop: each must get through its inputs without a crash or a broken promise. The
/// libFuzzer build of the same targets runs in `.ci/fuzz`.
@Suite struct FuzzTargetTests {
    private func runFuzzer(_ target: String, runs: Int) throws -> (status: Int32, output: String) {
        let result = try runProcess(
            builtExecutable("credstore-fuzz"), [target, "--runs", "\(runs)", "--seed", "\(UInt64.random(in: 1...UInt64.max))"])
        return (result.killedBySignal ? 128 + result.status : result.status, result.stdout + result.stderr)
    }

    @Test(arguments: [("challenge", 20_000), ("url", 20_000), ("bundle", 300), ("netrc", 20_000), ("git-credential", 20_000),
                      ("import-git-credentials", 10_000), ("import-keepassxc", 10_000), ("import-bitwarden", 10_000), ("import-chrome", 10_000)])
    func aFuzzTargetSurvivesItsMutatedInputs(target: String, runs: Int) throws {
        let result = try runFuzzer(target, runs: runs)
        // The seed is in the output, so a failure here can be replayed with --seed.
        #expect(result.status == 0, "credstore-fuzz \(target) failed: \(result.output)")
        #expect(result.output.contains("no failure"), "\(result.output)")
    }

    @Test func anUnknownTargetIsAUsageError() throws {
        let result = try runFuzzer("nonsense", runs: 1)
        #expect(result.status == 64)
        #expect(result.output.contains("usage"))
    }
}
