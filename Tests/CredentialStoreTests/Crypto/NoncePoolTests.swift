import Foundation
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

/// The nonce pool hands each random byte out once.
///
/// Its fork safety (the page is `MADV_WIPEONFORK`) is not tested here: a `fork()` of the test
/// process, which runs every suite's threads at once, left the networking suites' URLSession unable
/// to reach their servers. A child forked in a standalone run drew none of the parent's nonces, and
/// did when the page was not wiped.
@Suite struct NoncePoolTests {
    private static func nonce() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 24)
        bytes.withUnsafeMutableBytes { NoncePool.fill($0.baseAddress!, count: 24) }
        return bytes
    }

    @Test func noNonceRepeatsAcrossThreadsAndRefills() async throws {
        // 8 tasks × 500 nonces: many times the 168 a pool's page holds.
        let drawn = await withTaskGroup(of: [[UInt8]].self) { group in
            for _ in 0..<8 { group.addTask { (0..<500).map { _ in Self.nonce() } } }
            return await group.reduce(into: [[UInt8]]()) { $0 += $1 }
        }
        #expect(drawn.count == 4000)
        #expect(Set(drawn).count == drawn.count, "every nonce handed out once")
    }
}
