import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A pseudo-terminal with `credstore` running on it as on a user's terminal: the child leads a
/// session of its own whose controlling terminal is the pty, so `/dev/tty` and Ctrl-C work as they
/// do for a person typing.
final class PseudoTerminal {
    let master: Int32
    let slave: Int32
    private let slavePath: String
    private(set) var transcript = ""
    private var child: pid_t = 0
    private var exitStatus: Int32?

    init() throws {
        // The Glibc module leaves out the XSI pty functions (they need _XOPEN_SOURCE); look them up.
        typealias IntFunction = @convention(c) (Int32) -> Int32
        typealias NameFunction = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?
        guard let libc = dlopen(nil, RTLD_NOW),
              let openMaster = dlsym(libc, "posix_openpt").map({ unsafeBitCast($0, to: IntFunction.self) }),
              let grant = dlsym(libc, "grantpt").map({ unsafeBitCast($0, to: IntFunction.self) }),
              let unlock = dlsym(libc, "unlockpt").map({ unsafeBitCast($0, to: IntFunction.self) }),
              let name = dlsym(libc, "ptsname").map({ unsafeBitCast($0, to: NameFunction.self) })
        else { throw PTYError("the C library has no pseudo-terminal functions") }

        master = openMaster(O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard master >= 0, grant(master) == 0, unlock(master) == 0, let path = name(master) else {
            throw PTYError("could not open a pseudo-terminal")
        }
        slavePath = String(cString: path)
        // Kept open here so the terminal outlives the child and its settings can be read afterwards.
        slave = open(slavePath, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard slave >= 0 else { throw PTYError("could not open the pseudo-terminal's slave") }
    }

    deinit {
        if child > 0, exitStatus == nil {
            kill(child, SIGKILL)
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
        close(slave)
        close(master)
    }

    /// Starts `credstore arguments` on the terminal.
    ///
    /// posix_spawn with `POSIX_SPAWN_SETSID` (0x80 in glibc; the module hides the GNU constant)
    /// starts a new session, and opening the slave as its stdin then makes the pty its
    /// controlling terminal, as a terminal emulator does.
    func start(_ arguments: [String], environment: [String: String]) throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, 0x80)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, slavePath, O_RDWR, 0)
        posix_spawn_file_actions_adddup2(&actions, 0, 1)
        posix_spawn_file_actions_adddup2(&actions, 0, 2)

        let argv = ([Sandbox.binary.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        let result = posix_spawn(&child, Sandbox.binary.path, &actions, &attributes, argv, envp)
        guard result == 0 else { throw PTYError("posix_spawn failed: \(result)") }
    }

    /// Sends `signal` to the child, as `kill(1)` would; nothing once it has been seen to exit.
    func send(_ signal: Int32) {
        if child > 0, exitStatus == nil { kill(child, signal) }
    }

    /// Types `text` as keystrokes.
    func type(_ text: String) {
        var bytes = Array(text.utf8)
        _ = write(master, &bytes, bytes.count)
    }

    /// Reads what the terminal shows until `text` appears (true) or `timeout` passes (false).
    @discardableResult
    func waitFor(_ text: String, timeout: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !transcript.contains(text) {
            guard Date() < deadline else { return false }
            readAvailable(waitMilliseconds: 50)
        }
        return true
    }

    /// Like `waitFor`, but returns the moment `text` shows instead of reading on until the output
    /// pauses: to act at a point in a stream of output (a progress bar), not at a prompt, where
    /// the pause is what gives the child time to set the terminal up for what is typed next.
    @discardableResult
    func waitUntilShown(_ text: String, timeout: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !transcript.contains(text) {
            guard Date() < deadline else { return false }
            readAvailable(waitMilliseconds: 50, once: true)
        }
        return true
    }

    /// Waits for the child to exit, collecting the rest of what it shows; its exit status, or
    /// 128 + the signal that ended it, as a shell reports it.
    func waitForExit(timeout: Double = 30) throws -> Int32 {
        guard child > 0 else { throw PTYError("nothing was started") }
        let deadline = Date().addingTimeInterval(timeout)
        while exitStatus == nil {
            var status: Int32 = 0
            if waitpid(child, &status, WNOHANG) == child {
                let signal = status & 0x7F
                exitStatus = signal == 0 ? (status >> 8) & 0xFF : 128 + signal
                break
            }
            guard Date() < deadline else { throw PTYError("credstore did not exit; the terminal shows: \(transcript)") }
            readAvailable(waitMilliseconds: 50)
        }
        readAvailable(waitMilliseconds: 100)
        return exitStatus!
    }

    /// Whether the terminal echoes what is typed, as the shell would find it afterwards.
    var echoIsOn: Bool {
        var settings = termios()
        tcgetattr(slave, &settings)
        return settings.c_lflag & tcflag_t(ECHO) != 0
    }

    private func readAvailable(waitMilliseconds: Int32, once: Bool = false) {
        var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        while poll(&descriptor, 1, waitMilliseconds) > 0, descriptor.revents & Int16(POLLIN) != 0 {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = read(master, &buffer, buffer.count)
            guard count > 0 else { return }
            transcript += String(decoding: buffer[0..<count], as: UTF8.self)
            if once { return }
        }
    }
}

struct PTYError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
