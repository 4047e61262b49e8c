import Foundation
import SeededRandom
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges

/// A bounded fuzz run of the challenge parser: random and mutated headers must parse or throw
/// ``CredentialStorageError``, never crash, hang or throw anything else. Seeded, so a failure
/// reproduces; bounded in count and time, so it fits in CI.
@Suite struct ChallengeParserFuzzTests {
    static let seeds: [String] = [
        #"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#,
        #"Basic realm="foo", charset="UTF-8""#,
        #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#,
        "Negotiate YIIBhgYGKwYBBQUCoIIBejCCAXag==, NTLM",
        " , Basic realm = \"r\" ,, , Digest realm=\"d\",nonce = n , ",
    ]
    /// The bytes the grammar turns on, so mutations hit the interesting branches often.
    static let specialBytes: [UInt8] = Array("\"\\,= \t\r\n=/+~aZ9".utf8) + [0x00, 0x7F, 0x80, 0xC3, 0xFF]

    static func mutate(_ input: [UInt8], using rng: inout SplitMix) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            switch Int.random(in: 0..<6, using: &rng) {
            case 0 where !bytes.isEmpty:  // flip to any byte
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            case 1:  // insert a byte that matters to the grammar
                bytes.insert(specialBytes.randomElement(using: &rng)!, at: Int.random(in: 0...bytes.count, using: &rng))
            case 2 where !bytes.isEmpty:  // truncate
                bytes.removeLast(Int.random(in: 1...bytes.count, using: &rng))
            case 3 where !bytes.isEmpty:  // delete a byte
                bytes.remove(at: Int.random(in: 0..<bytes.count, using: &rng))
            case 4 where !bytes.isEmpty:  // duplicate a slice
                let start = Int.random(in: 0..<bytes.count, using: &rng)
                let end = Int.random(in: start...min(bytes.count, start + 32), using: &rng)
                bytes.insert(contentsOf: bytes[start..<end], at: Int.random(in: 0...bytes.count, using: &rng))
            default:  // splice in a piece of another seed
                let other = Array(seeds.randomElement(using: &rng)!.utf8)
                let start = Int.random(in: 0..<other.count, using: &rng)
                bytes.insert(contentsOf: other[start...], at: Int.random(in: 0...bytes.count, using: &rng))
            }
        }
        return bytes
    }

    @Test("Random and mutated challenge headers parse or throw CredentialStorageError within the time bound")
    func fuzzParser() {
        var rng = SplitMix(seed: 0x5EED_C0FF_EE15_600D)
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(5)
        let seedBytes = Self.seeds.map { Array($0.utf8) }
        var runs = 0, parsed = 0, slowest = Duration.zero
        while runs < 200_000, clock.now < deadline {
            let values: [String]
            if Int.random(in: 0..<4, using: &rng) == 0 {
                let random = (0..<Int.random(in: 0...64, using: &rng)).map { _ in
                    Bool.random(using: &rng) ? Self.specialBytes.randomElement(using: &rng)! : UInt8.random(in: 0...255, using: &rng)
                }
                values = [String(decoding: random, as: UTF8.self)]
            } else {
                values = (0..<Int.random(in: 1...3, using: &rng)).map { _ in
                    String(decoding: Self.mutate(seedBytes.randomElement(using: &rng)!, using: &rng), as: UTF8.self)
                }
            }
            let start = clock.now
            do {
                let challenges = try AuthenticationChallenge.parse(values)
                parsed += 1
                // What parses must be usable: schemes are lowercase tokens, never empty.
                for challenge in challenges {
                    #expect(!challenge.scheme.isEmpty && challenge.scheme == challenge.scheme.lowercased())
                    if challenge.scheme == "digest", var responder = try? DigestResponder(challenge: challenge, clientNonce: { "c" }) {
                        _ = try? responder.authorization(method: "GET", uri: "/", credential: Credential(user: "u", password: "p", persistence: .none))
                    }
                }
            } catch let error as CredentialStorageError {
                #expect(error.code == .invalidInput)
            } catch {
                Issue.record("unexpected error type for \(values): \(error)")
            }
            slowest = max(slowest, clock.now - start)
            runs += 1
        }
        #expect(runs >= 1_000, "the fuzz loop ran only \(runs) inputs before the deadline")
        #expect(parsed > 0, "no mutated input parsed; the mutations are too destructive to be useful")
        #expect(slowest < .seconds(1), "one input took \(slowest)")
    }

    @Test("A maximum-size header of pathological content parses or throws quickly")
    func largePathologicalInputs() {
        let size = AuthenticationChallenge.maximumHeaderBytes
        let inputs = [
            String(repeating: ",", count: size),
            String(repeating: " ", count: size),
            "Basic " + String(repeating: "a=b, ", count: size / 6),
            "Basic realm=\"" + String(repeating: "\\\"", count: (size - 14) / 2) + "\"",
            String(repeating: "a ", count: size / 2),
            "Negotiate " + String(repeating: "=", count: size - 10),
            String(repeating: "Basic, ", count: size / 7),
        ]
        let clock = ContinuousClock()
        for input in inputs {
            let elapsed = clock.measure {
                do {
                    _ = try AuthenticationChallenge.parse([input])
                } catch {
                    #expect(error is CredentialStorageError)
                }
            }
            #expect(elapsed < .seconds(2), "input of \(input.utf8.count) bytes took \(elapsed)")
        }
    }
}
