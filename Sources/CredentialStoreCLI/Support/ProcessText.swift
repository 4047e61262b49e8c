import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Whether the process's arguments, and the environment variables credstore reads, are UTF-8
/// text, which is how every one of them is read.
///
/// Swift decodes argv and the environment with replacement: bytes that are not UTF-8 become
/// U+FFFD, so different bytes read as the same text. A passphrase of random bytes then unlocked
/// with any other of its length, and `--store` named another file than the kernel would open.
/// Such input is refused instead, naming the argument's position or the variable, never its value.
enum ProcessText {
    /// The reason the process's input is not text, or nil when all of it is.
    static func undecodableInput() -> String? {
        for index in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index], !isText(argument) else { continue }
            return "argument \(index) is not UTF-8 text; credstore reads every argument as text"
        }
        var entry = environ
        while let variable = entry.pointee {
            entry += 1
            guard !isText(variable) else { continue }
            let name = String(decoding: bytes(variable).prefix { $0 != UInt8(ascii: "=") }, as: UTF8.self)
            if isRead(name) {
                return "the environment variable \(name) is not UTF-8 text; credstore reads it as text"
            }
        }
        return nil
    }

    /// The variables credstore reads: its own, and those that name the folders of its files. A
    /// variable of another program's may hold any bytes.
    private static func isRead(_ name: String) -> Bool {
        name.hasPrefix("CREDSTORE_") || ["HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"].contains(name)
    }

    private static func isText(_ string: UnsafePointer<CChar>) -> Bool {
        String(validating: bytes(string), as: UTF8.self) != nil
    }

    private static func bytes(_ string: UnsafePointer<CChar>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: UnsafeRawPointer(string).assumingMemoryBound(to: UInt8.self), count: strlen(string))
    }
}
