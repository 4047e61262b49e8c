import CredentialStore
import CredentialStoreCLI
import CredentialStoreFormats
import CredentialStoreTestSupport
import Foundation
import Testing

/// A quote or backslash followed by a combining mark is one character but two scalars: the
/// shell, curl and netrc readers read the quote. Every escaping compares scalars.
struct ScalarEscapingTests {
    @Test func aShellWordWithAQuoteBeforeACombiningMarkReadsBackAsItself() throws {
        let word = "dir'\u{301};touch${IFS}pwned;'"
        let quoted = ShellWords.quoted(word)
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("credstore-shell-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let echoed = try runProcess(URL(fileURLWithPath: "/bin/sh"), ["-c", "printf %s " + quoted], directory: folder)
        #expect(echoed.stdout == word)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("pwned").path), "the advice ran a command")
    }

    @Test func aNetrcTokenStartingWithAHashAndACombiningMarkIsQuoted() throws {
        let password = "#\u{301}secret"
        let text = Netrc.render([Netrc.Machine(host: "h.example.com", login: "u", password: password)])
        #expect(try Netrc.parse(text).machines.first?.password == password)
    }

    /// A slash followed by a combining mark is a slash to the kernel: the folder above a path is
    /// found at the last slash byte, and no folder between is passed over.
    @Test func theFolderAboveAPathIsFoundAtItsLastSlashByte() {
        #expect("/a/b/\u{301}c".parentPath == "/a/b")
        #expect("/a/\u{301}b/\u{301}c".parentPath.parentPath == "/a")
        #expect("/a/b/".parentPath == "/a" && "/a//b".parentPath == "/a")
        #expect("/a".parentPath == "/" && "/".parentPath == "/" && "name".parentPath == "" && "a/b".parentPath == "a")
        #expect("/a/\u{301}b//c/".pathElements == ["a", "\u{301}b", "c"])
    }

    @Test func replacingEveryComparesScalars() {
        #expect("a\"\u{33B}b\\\u{301}".replacingEvery("\"", with: "\\\"").unicodeScalars.map(\.value)
                == [0x61, 0x5C, 0x22, 0x33B, 0x62, 0x5C, 0x301])
    }
}
