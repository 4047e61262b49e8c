// Fuzz targets for the parsers that read untrusted input: challenge headers, URLs, bundles, netrc
// files, git-credential requests and the files `credstore import --from` reads.
//
// Built plainly, a deterministic mutation loop over the seeds (the bounded run of the test suite):
//   credstore-fuzz challenge|url|bundle|netrc|git-credential|import-FORMAT [--runs N] [--seed S]
// (FORMAT: git-credentials, keepassxc, bitwarden, chrome, as `import --from` names them)
//
// Built with libFuzzer (as .ci/run does), libFuzzer drives the target from the seeds and takes
// its own options (see Fuzzing.swift):
//   swift build --scratch-path .build-fuzz --product credstore-fuzz \
//       -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING
//   .build-fuzz/debug/credstore-fuzz challenge -max_total_time=60
//
// Each target traps (and so reports a crash) when the code under test breaks a promise, not only
// when it crashes: a parsed URL whose space is not stable under canonicalisation, a challenge that
// parses to an empty scheme, a dry-run import that changes the store.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
func usage() -> Never {
    FileHandle.standardError.write(Data("usage: credstore-fuzz challenge|url|bundle|netrc|git-credential|import-git-credentials|import-keepassxc|import-bitwarden|import-chrome [--runs N] [--seed S] | [libFuzzer options]\n".utf8))
    exit(64)
}
guard let targetName = arguments.first, let (target, seeds) = try fuzzTarget(named: targetName) else { usage() }
#if FUZZING
exit(runLibFuzzer(name: targetName, target: target, seeds: seeds, options: Array(arguments.dropFirst())))
#else

var runs = 10_000
var seed: UInt64 = 1
var index = 1
while index < arguments.count {
    guard index + 1 < arguments.count else { usage() }
    switch arguments[index] {
    case "--runs": runs = Int(arguments[index + 1]) ?? runs
    case "--seed": seed = UInt64(arguments[index + 1]) ?? seed
    default: usage()
    }
    index += 2
}
var mutator = Mutator(seed: seed)
var corpus = seeds
for seedInput in seeds { target(seedInput) }
for _ in 0..<runs {
    let input = mutator.mutate(corpus[mutator.below(corpus.count)], splicing: corpus[mutator.below(corpus.count)])
    target(input)
    // Keep some mutants as parents, so the loop wanders beyond one edit from the seeds.
    if corpus.count < 256, mutator.below(8) == 0 { corpus.append(input) }
}
print("credstore-fuzz \(targetName): \(runs + seeds.count) inputs, seed \(seed), no failure")
#endif
