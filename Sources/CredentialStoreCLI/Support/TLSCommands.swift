import ArgumentParser
import CredentialStore
import Foundation
import Synchronization
#if canImport(Glibc)
// `struct stat` is CoreFoundation's declaration once swift-nio's modules are in the build: the
// member-import check wants the module that declares it.
import CoreFoundation
import Glibc
#endif

/// Where the TLS commands find their ``TLSToolkit``: installed in `credstore-tls`, and in
/// `credstore` the helper itself, which runs the whole command again in this process's place.
package enum TLSCommands {
    /// The helper's name, as git's `git-remote-https` is git's: beside `credstore` in a build
    /// folder, in `../libexec/credstore/` where scripts/install and the .deb put it.
    package static let helperName = "credstore-tls"

    private static let installed = Mutex<(any TLSToolkit)?>(nil)

    /// Set in the environment of the hand-off: a process that gets it and has no toolkit is not
    /// the helper (a copy of or a link to `credstore` in its place), and says so rather than hand
    /// the command on again, for ever.
    static let handOffVariable = "CREDSTORE_TLS_HAND_OFF"

    /// Makes `toolkit` the one every TLS command uses; `credstore-tls` calls it before it parses.
    package static func install(_ toolkit: any TLSToolkit) {
        installed.withLock { $0 = toolkit }
        // Nothing this process starts is a hand-off.
        unsetenv(handOffVariable)
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
        if ProcessInfo.processInfo.environment[handOffVariable] != nil {
            throw CommandFailure(.unavailable, """
                credstore handed this command to \(executablePath() ?? helperName), which is not \(helperName): \
                it has no TLS libraries (a copy of or a link to credstore?); install \(helperName) there
                """)
        }
        for candidate in candidates {
            var info = stat()
            guard stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 else { continue }
            // The helper gets the user's passwords, passphrase and terminal: it, and every folder
            // above it, must be one no other user could have changed.
            let path: String
            do {
                path = try PathOwnership.check(candidate)
            } catch .unreadable(let element, let reason) {
                throw CommandFailure(.unavailable, "cannot read \(element), on the way to \(candidate): \(reason)")
            } catch .foreignOwner(let element, let uid) {
                throw CommandFailure(.noPermission, "\(element) belongs to another user (uid \(uid)), who could have put another program in \(helperName)'s place; credstore does not run it: reinstall \(helperName) (scripts/install or the .deb)")
            } catch .writableByOthers(let element, let mode) {
                throw CommandFailure(.noPermission, "\(element) can be written by others (mode \(mode)), who could have put another program in \(helperName)'s place; credstore does not run it: close it with `chmod go-w \(ShellWords.quoted(element))` or reinstall \(helperName)")
            }
            var argv: [UnsafeMutablePointer<CChar>?] = ([path] + CommandLine.arguments.dropFirst()).map { strdup($0) }
            argv.append(nil)
            setenv(handOffVariable, "1", 1)
            execv(path, argv)
            let reason = String(cString: strerror(errno))
            unsetenv(handOffVariable)
            throw CommandFailure(.unavailable, "could not run \(path) for this command: \(reason); reinstall \(helperName) (scripts/install or the .deb)")
        }
        let places = candidates.isEmpty ? "beside credstore" : candidates.joined(separator: " or ")
        throw CommandFailure(.unavailable, """
            this command reads or writes certificates, which credstore does through \(helperName) (the \
            same tool with the TLS libraries linked), and \(helperName) is not installed (looked for \
            \(places)); scripts/install and the .deb install it, and `swift build -c release --toolset \
            release.toolset.json --product \(helperName)` builds it beside the README's build
            """)
    }

    /// Beside this executable, then in `../libexec/credstore/`: the executable's own folder
    /// through /proc/self/exe, never `$PATH`, so that which helper runs is decided by where the
    /// tool is installed and by nothing a caller's environment says. The first that is an
    /// executable file is run (a folder or a file without the x bit is passed over).
    private static func helperCandidates() -> [String] {
        guard let executable = executablePath() else { return [] }
        let folder = executable.parentPath
        let prefix = folder.parentPath == "/" ? "" : folder.parentPath
        return [folder + "/" + helperName, prefix + "/libexec/credstore/" + helperName]
    }

    /// This process's executable, as the kernel names it.
    private static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
