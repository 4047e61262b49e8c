import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

@Suite struct MD5Tests {
    @Test("MD5 gives the RFC 1321 test suite's answers", arguments: [
        ("", "d41d8cd98f00b204e9800998ecf8427e"),
        ("a", "0cc175b9c0f1b6a831c399e269772661"),
        ("abc", "900150983cd24fb0d6963f7d28e17f72"),
        ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
        ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
        ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"),
        ("12345678901234567890123456789012345678901234567890123456789012345678901234567890", "57edf4a22be3c955ac49da2e2107b67a"),
    ])
    func knownAnswers(input: String, expected: String) {
        #expect(DigestResponder.hex(MD5.hash(Array(input.utf8))) == expected)
    }

    @Test("MD5 handles inputs at the padding boundaries (55, 56, 63, 64 and 65 bytes)")
    func paddingBoundaries() {
        // Reference values from Python's hashlib for "a" repeated n times.
        let expected = [
            55: "ef1772b6dff9a122358552954ad0df65",
            56: "3b0c8ac703f828b04c6c197006d17218",
            63: "b06521f39153d618550606be297466d5",
            64: "014842d480b571495a4a0363793f7367",
            65: "c743a45e0d2e6a95cb859adae0248435",
        ]
        for (count, digest) in expected {
            #expect(DigestResponder.hex(MD5.hash(Array(repeating: UInt8(ascii: "a"), count: count))) == digest, "length \(count)")
        }
    }

    @Test("SHA-256 through libsodium gives the FIPS 180 answer for abc")
    func sha256KnownAnswer() {
        #expect(DigestResponder.hex(Sodium.sha256(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(DigestResponder.hex(Sodium.sha256([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }
}
