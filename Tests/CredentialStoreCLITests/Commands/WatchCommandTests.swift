import CredentialStoreTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `credstore watch`: changes from other processes, as they happen.
struct WatchCommandTests {
    /// A running `credstore watch`, its output in files read while it runs.
    final class Watcher {
        let process: ChildProcess

        init(_ sandbox: Sandbox, _ arguments: [String]) throws {
            process = try ChildProcess(Sandbox.binary, ["watch"] + arguments + sandbox.storeArguments, environment: sandbox.environment)
        }

        deinit {
            process.send(SIGINT)
            _ = process.wait(timeout: .seconds(10))
        }

        var lines: [String] {
            process.stdout.split(separator: "\n").map(String.init)
        }

        var stderr: String { process.stderr }

        /// Waits until `condition` holds, up to `timeout` seconds.
        func wait(timeout: Double = 10, until condition: () -> Bool) -> Bool {
            process.wait(timeout: .seconds(timeout), until: condition)
        }
    }

    @Test func watchPrintsOtherProcessesChangesAsJSONLines() throws {
        let sandbox = try Sandbox()
        let watcher = try Watcher(sandbox, ["--json"])
        #expect(watcher.wait { watcher.stderr.contains("watching") })

        try sandbox.add("https://api.example.com", user: "alice", password: "first-secret")
        try sandbox.add("https://api.example.com", user: "alice", password: "second-secret")
        #expect(try sandbox.run(["remove", "https://api.example.com", "--user", "alice"] + sandbox.storeArguments).status == 0)

        #expect(watcher.wait { watcher.lines.count >= 4 }, "watch printed: \(watcher.lines)")
        let changes = try watcher.lines.map(jsonObject)
        #expect(changes.map { $0["kind"] as? String } == ["added", "defaultChanged", "updated", "removed"])
        for change in changes {
            #expect(change["origin"] as? String == "otherProcess")
            #expect(change["user"] as? String == "alice")
            #expect(change["persistence"] as? String == "permanent")
            let space = try #require(change["space"] as? [String: Any])
            #expect(space["host"] as? String == "api.example.com")
        }
        #expect(keyOrder(watcher.lines[0][...]) == ["time", "kind", "origin", "user", "persistence", "space"])
        #expect(!watcher.lines.joined().contains("secret"))
    }

    /// docs/cli.md: `watch` runs until interrupted. It ends by that signal, as a shell pipeline's
    /// filter should (a loop around it stops too; a shell reports 128 + the signal), with nothing
    /// more on stderr than its "watching" line, and every change it saw already printed.
    @Test(arguments: [SIGINT, SIGTERM])
    func watchStoppedByASignalEndsByThatSignal(_ signal: Int32) throws {
        let sandbox = try Sandbox()
        let watcher = try Watcher(sandbox, [])
        #expect(watcher.wait { watcher.stderr.contains("watching") })
        try sandbox.add("https://api.example.com", user: "alice", password: "pw")
        #expect(watcher.wait { watcher.lines.count >= 2 }, "watch printed: \(watcher.lines)")

        watcher.process.send(signal)
        #expect(watcher.wait { !watcher.process.isRunning }, "watch is still running after signal \(signal)")
        let ended = watcher.process.wait()
        #expect(ended.killedBySignal)
        #expect(ended.status == signal)
        #expect(watcher.lines.count == 2 && watcher.lines.allSatisfy { $0.contains("user alice") }, "\(watcher.lines)")
        #expect(watcher.stderr == "credstore: watching \(sandbox.store.path); press Ctrl-C to stop\n")
    }

    /// A store `watch` cannot open ends it at once, with the status and the one error line any
    /// command gives for it, and no "watching" line: a script must not take it for a running watch.
    @Test func watchOnAStoreItCannotOpenExitsWithItsStatusInOneLine() throws {
        let readable = try Sandbox()
        try readable.add("https://api.example.com", user: "alice", password: "pw")
        chmod(readable.store.path, 0o644)

        let damaged = try Sandbox()
        try damaged.add("https://api.example.com", user: "alice", password: "pw")
        let handle = try FileHandle(forWritingTo: damaged.store)
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 100))
        try handle.close()

        for (sandbox, status) in [(readable, Int32(77)), (damaged, 74)] {
            let watcher = try Watcher(sandbox, [])
            #expect(watcher.wait { !watcher.process.isRunning }, "watch kept running on a store it cannot open")
            let ended = watcher.process.wait()
            #expect(!ended.killedBySignal)
            #expect(ended.status == status)
            #expect(watcher.lines.isEmpty)
            let stderr = watcher.stderr
            #expect(stderr.hasPrefix("credstore: ") && stderr.hasSuffix("\n") && stderr.dropLast().allSatisfy { $0 != "\n" }, "\(stderr)")
            #expect(!stderr.contains("watching"))
        }
        #expect(readable.mode(of: readable.store) == 0o644, "a refused store is left as it was, not re-permissioned")
    }

    @Test func watchPrintsReadableLinesAndRunsHardened() throws {
        let sandbox = try Sandbox()
        let watcher = try Watcher(sandbox, [])
        #expect(watcher.wait { watcher.stderr.contains("watching") })
        try sandbox.add("https://api.example.com", user: "bob", password: "pw", ["--realm", "R"])
        #expect(watcher.wait { watcher.lines.count >= 1 })
        let line = try #require(watcher.lines.first)
        #expect(line.contains("added https://api.example.com:443 realm \"R\" user bob (permanent, other process)"))

        // No core dumps from a process that holds secrets.
        let limits = try String(contentsOfFile: "/proc/\(watcher.process.processIdentifier)/limits", encoding: .utf8)
        let core = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") })
        #expect(core.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2) == ["0", "0"])

        // Its key material is on locked pages. (The process is non-dumpable, so only root may read
        // its smaps; another user's test run gets EACCES, which is that protection at work.)
        // (Under AddressSanitizer or ThreadSanitizer, which make mlock a no-op in the CLI built
        // with them, nothing is.)
        let underSanitizer = [String](["__asan_init", "__tsan_init"]).contains { dlsym(dlopen(nil, RTLD_NOW), $0) != nil }
        if underSanitizer {
            // Nothing to observe.
        } else if let handle = FileHandle(forReadingAtPath: "/proc/\(watcher.process.processIdentifier)/smaps") {
            let smaps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
            let flagLines = smaps.split(separator: "\n").filter { $0.hasPrefix("VmFlags:") }
            #expect(flagLines.contains { $0.split(separator: " ").contains("lo") }, "no locked mapping in the watcher")
        } else {
            #expect(getuid() != 0, "root could not read the watcher's smaps")
        }
    }
}
