import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

/// SHA-512/256 for Digest's `SHA-512-256`: libsodium's SHA-512 started from the truncated
/// variant's initial value, checked against FIPS 180-4's examples and Python's hashlib.
@Suite struct SHA512_256Tests {
    @Test("SHA-512/256 gives the published answers", arguments: [
        ("", "c672b8d1ef56ed28ab87c3622c5114069bdd3ad7b8f9737498d0c01ecef0967a"),
        ("abc", "53048e2681941ef99b2e29b76b4c7dabe4c2d0c634fc6d46e0e2f13107e7af23"),
        ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "3928e184fb8690f840da3988121d31be65cb9d3ef83ee6146feac861e19b563a"),
        (String(repeating: "a", count: 1000), "40eb4a70d4d69815407a9e272f0101cd67e3d11262a4a0bfc087712749c7fb53"),
    ])
    func knownAnswers(input: String, expected: String) {
        #expect(DigestResponder.hex(Sodium.sha512_256(Array(input.utf8))) == expected)
    }
}
