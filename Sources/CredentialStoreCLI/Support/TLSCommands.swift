import ArgumentParser
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Where the TLS commands find their ``TLSToolkit``: installed in `credstore-tls`, and in
/// `credstore` the helper itself, which runs the whole command again in this process's place.
package enum TLSCommands {
    /// The helper's name, as git's `git-remote-https` is git's: beside `credstore` in a build
    /// folder, in `../libexec/credstore/` where scripts/install and the .deb put it.
    package static let helperName = "credstore-tls"

    private static let installed = Mutex<(any TLSToolkit)?>(nil)

    /// Makes `toolkit` the one every TLS command uses; `credstore-tls` calls it before it parses.
    package static func install(_ toolkit: any TLSToolkit) {
        installed.withLock { $0 = toolkit }
    }

    /// The installed toolkit; in `credstore`, which has none, this never returns: the process
    /// becomes `credstore-tls` with the same arguments, environment and open files, and the helper
    /// parses and runs the command from the start.
    ///
    /// Call it before the command changes anything (a file, the store): what ran before it runs
    /// again in the helper.
    ///
    /// - Throws: ``CommandFailure`` with EX_UNAVAILABLE when the helper is missing or will not run.
    package static func toolkit() throws -> any TLSToolkit {
        if let toolkit = installed.withLock({ $0 }) { return toolkit }
        let candidates = helperCandidates()
        for path in candidates where access(path, X_OK) == 0 {
            var argv: [UnsafeMutablePointer<CChar>?] = ([path] + CommandLine.arguments.dropFirst()).map { strdup($0) }
            argv.append(nil)
            execv(path, argv)
            let reason = String(cString: strerror(errno))
            throw CommandFailure(.unavailable, "could not run \(path) for this TLS command: \(reason)")
        }
        let places = candidates.isEmpty ? "beside credstore" : candidates.joined(separator: " or ")
        throw CommandFailure(.unavailable, """
            this command reads or writes certificates, which credstore does through \(helperName) (the \
            same tool with the TLS libraries linked), and \(helperName) is not installed (looked for \
            \(places)); scripts/install and the .deb install it, and `swift build -c release -Xswiftc \
            -static-executable --product \(helperName)` builds it beside the README's build
            """)
    }

    /// Beside this executable, then in `../libexec/credstore/`: the executable's own folder
    /// through /proc/self/exe, never `$PATH`, so that which helper runs is decided by where the
    /// tool is installed and by nothing a caller's environment says.
    private static func helperCandidates() -> [String] {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return [] }
        let executable = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let folder = (executable as NSString).deletingLastPathComponent
        return [folder + "/" + helperName,
                ((folder as NSString).deletingLastPathComponent as NSString).appendingPathComponent("libexec/credstore/" + helperName)]
    }
}
