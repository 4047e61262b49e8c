#if FUZZING
import Foundation

// The libFuzzer build: main.swift hands over to libFuzzer's driver.

/// The target libFuzzer drives; set once, before the first input.
nonisolated(unsafe) private var activeTarget: ([UInt8]) -> Void = { _ in }

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// libFuzzer's archive also brings its own `main`, which wants this symbol; ours is the entry
/// point that runs, but the link needs it defined.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    activeTarget(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}

/// Runs libFuzzer on `target` with `options` (its `-flag=value` options); when no corpus folder
/// is given, it starts from a fresh one holding the seeds.
func runLibFuzzer(name: String, target: @escaping ([UInt8]) -> Void, seeds: [[UInt8]], options: [String]) -> Int32 {
    activeTarget = target
    var driverArguments = [CommandLine.arguments[0]] + options
    var corpus: URL?
    if !options.contains(where: { !$0.hasPrefix("-") }) {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("credstore-fuzz-\(name)-\(getpid())")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (index, seed) in seeds.enumerated() {
            try? Data(seed).write(to: folder.appendingPathComponent("seed-\(index)"))
        }
        driverArguments.append(folder.path)
        corpus = folder
    }
    var argc = Int32(driverArguments.count)
    var cArguments: [UnsafeMutablePointer<CChar>?] = driverArguments.map { strdup($0) } + [nil]
    let status = cArguments.withUnsafeMutableBufferPointer { buffer -> Int32 in
        var argv = buffer.baseAddress
        return LLVMFuzzerRunDriver(&argc, &argv, fuzzerTestOneInput)
    }
    if let corpus { try? FileManager.default.removeItem(at: corpus) }
    return status
}
#endif
