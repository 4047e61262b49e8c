#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Standard input and the controlling terminal, for secrets.
struct TerminalInput: SecretInput {
    /// A line longer than this is not a password; stop rather than read an endless stream.
    static let maximumLineLength = 64 * 1024

    var isTerminal: Bool { isatty(0) == 1 }

    func readLine() throws -> String? {
        try Self.readLine(from: 0)
    }

    func readSecret(prompt: String) throws -> String? {
        var original = termios()
        guard tcgetattr(0, &original) == 0 else {
            throw CommandFailure(.ioError, "standard input is not a terminal that can hide what is typed; pipe the secret on standard input instead")
        }
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO | ECHOE | ECHOK | ECHONL)
        EchoGuard.install(original)
        defer { EchoGuard.restore() }
        // Echo goes off before the prompt shows, so nothing typed after the prompt can be echoed
        // (TCSAFLUSH also drops what was typed ahead, while echo was still on).
        guard tcsetattr(0, TCSAFLUSH, &silent) == 0 else {
            throw CommandFailure(.ioError, "could not turn off echo on the terminal; pipe the secret on standard input instead")
        }

        // The prompt goes to the terminal itself, so it shows even when stderr is redirected.
        let promptDescriptor = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC)
        let output = FileDescriptorOutput(fileDescriptor: promptDescriptor >= 0 ? promptDescriptor : 2)
        defer { if promptDescriptor >= 0 { close(promptDescriptor) } }
        output.write(prompt)
        let line = try Self.readLine(from: 0)
        // The user's Enter was not echoed; end the prompt's line for them.
        output.write("\n")
        return line
    }

    /// Reads up to a newline (not kept) or the end of input, one byte at a time so that nothing
    /// after the line is consumed; nil if the input ended before any byte.
    static func readLine(from fileDescriptor: Int32) throws -> String? {
        var bytes: [UInt8] = []
        defer { wipe(&bytes) }
        var byte: UInt8 = 0
        while true {
            let count = read(fileDescriptor, &byte, 1)
            if count < 0, errno == EINTR { continue }
            if count < 0 {
                throw CommandFailure(.ioError, "could not read standard input: \(String(cString: strerror(errno)))")
            }
            if count == 0 {
                if bytes.isEmpty { return nil }
                break
            }
            if byte == UInt8(ascii: "\n") { break }
            bytes.append(byte)
            guard bytes.count <= maximumLineLength else {
                throw CommandFailure(.dataError, "the line on standard input is longer than \(maximumLineLength / 1024) KiB; give the secret alone on one line")
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CommandFailure(.dataError, "the line on standard input is not valid UTF-8")
        }
        return text
    }

    /// Overwrites the bytes of a secret before the array is freed (best effort: Swift strings copy).
    private static func wipe(_ bytes: inout [UInt8]) {
        for index in bytes.indices { bytes[index] = 0 }
    }
}

/// Puts the terminal's echo back if a signal ends the process during a no-echo prompt, so that
/// Ctrl-C at the prompt does not leave the shell typing blind.
private enum EchoGuard {
    // Written before the handlers are installed and read only by them, on the one thread that prompts.
    // A heap cell of termios's full C stride, not a global `termios` variable: the global is laid
    // out with Swift's size of the struct, shorter than the C size that copies and tcsetattr use,
    // and AddressSanitizer caught the 3-byte overrun.
    nonisolated(unsafe) static let saved: UnsafeMutablePointer<termios> = {
        let cell = UnsafeMutablePointer<termios>.allocate(capacity: 1)
        cell.initialize(to: termios())
        return cell
    }()
    static let signals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    static func install(_ original: termios) {
        saved.pointee = original
        // A parent may have spawned us with these signals blocked (threads of many runtimes block
        // them); at a prompt, Ctrl-C must still end the process.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for signalNumber in signals { sigaddset(&unblock, signalNumber) }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        for signalNumber in signals {
            signal(signalNumber) { received in
                tcsetattr(0, TCSANOW, EchoGuard.saved)
                signal(received, SIG_DFL)
                raise(received)
            }
        }
    }

    static func restore() {
        tcsetattr(0, TCSAFLUSH, saved)
        for signalNumber in signals { signal(signalNumber, SIG_DFL) }
    }
}
