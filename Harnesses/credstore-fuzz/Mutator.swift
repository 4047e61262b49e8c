import SeededRandom

/// A plain-build mutation loop: flips, inserts, deletes, splices and truncations of the seeds,
/// deterministic for a seed, so a failure found in CI can be replayed.
struct Mutator {
    private var random: SplitMix

    init(seed: UInt64) {
        random = SplitMix(seed: seed)
    }

    mutating func next() -> UInt64 { random.next() }
    mutating func below(_ n: Int) -> Int { n <= 0 ? 0 : Int(next() % UInt64(n)) }

    mutating func mutate(_ input: [UInt8], splicing other: [UInt8]) -> [UInt8] {
        var bytes = input
        for _ in 0...below(4) {
            switch below(6) {
            case 0 where !bytes.isEmpty: bytes[below(bytes.count)] ^= UInt8(1 << below(8))
            case 1: bytes.insert(UInt8(truncatingIfNeeded: next()), at: below(bytes.count + 1))
            case 2 where !bytes.isEmpty: bytes.remove(at: below(bytes.count))
            case 3 where !bytes.isEmpty: bytes = Array(bytes.prefix(below(bytes.count)))
            case 4 where !other.isEmpty:
                let start = below(other.count)
                bytes.insert(contentsOf: other[start..<min(other.count, start + 1 + below(16))], at: below(bytes.count + 1))
            case 5 where !bytes.isEmpty: bytes[below(bytes.count)] = [0x22, 0x5C, 0x2C, 0x3D, 0x0A, 0x00, 0xFF][below(7)]
            default: break
            }
        }
        return bytes
    }
}
