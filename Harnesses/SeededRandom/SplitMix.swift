/// A small, seedable generator (SplitMix64): good enough to drive shuffles, mutations, kill times
/// and damage that must reproduce from a seed, in the tests and the harnesses alike.
public struct SplitMix: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    /// A generator for one numbered sub-task of a run (a trial, a worker), independent of the others.
    public init(seed: UInt64, stream: UInt64) {
        var mixer = SplitMix(seed: seed ^ (stream &* 0x9E37_79B9_7F4A_7C15))
        state = mixer.next()
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
