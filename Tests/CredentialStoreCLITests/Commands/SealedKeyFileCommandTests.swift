import CredentialStoreTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Whether `systemd-creds` can seal here, as the user running the tests, and if not why: the
/// sealing tests run where it can and are skipped, with this reason, where it cannot.
enum SystemdCredsProbe {
    static let tool = ["/usr/bin/systemd-creds", "/bin/systemd-creds"].first { FileManager.default.isExecutableFile(atPath: $0) }

    static let (works, reason): (Bool, String) = {
        guard let tool else { return (false, "systemd-creds is not installed (systemd 250 or later provides it)") }
        guard let result = try? runProcess(URL(fileURLWithPath: tool), ["encrypt", "--name=probe", "-", "-"], stdin: "probe") else {
            return (false, "systemd-creds could not be started")
        }
        guard result.status == 0 else {
            let line = result.stderr.split(whereSeparator: \.isNewline).last.map(String.init) ?? "exit \(result.status)"
            return (false, "systemd-creds cannot seal for uid \(getuid()) here: \(line)")
        }
        return (true, "systemd-creds seals here")
    }()
}

/// `credstore init --seal-with systemd-creds`: a key file only this machine opens, used with no
/// prompt, no passphrase and nothing of the key in the clear on disk.
@Suite(.serialized, .enabled(if: SystemdCredsProbe.works, Comment(rawValue: SystemdCredsProbe.reason)))
struct SealedKeyFileCommandTests {
    /// "CSKEY", a zero byte, format version 2: a sealed key file.
    static let sealedMagic: [UInt8] = [0x43, 0x53, 0x4B, 0x45, 0x59, 0x00, 0x00, 0x02]

    private func keyFile(_ sandbox: Sandbox) -> URL {
        sandbox.store.deletingLastPathComponent().appendingPathComponent("store.key")
    }

    @Test func aStoreCreatedSealedOpensUnattendedAndItsKeyIsNeverInTheClear() throws {
        let sandbox = try Sandbox()
        let created = try sandbox.run(["init", "--seal-with", "systemd-creds", "--json"] + sandbox.storeArguments)
        #expect(created.status == 0, "\(created.stderr)")
        #expect(try jsonObject(created.stdout)["sealedWith"] as? String == "systemd-creds")
        let contents = try [UInt8](Data(contentsOf: keyFile(sandbox)))
        #expect(Array(contents.prefix(8)) == Self.sealedMagic)
        #expect(sandbox.mode(of: keyFile(sandbox)) & 0o777 == 0o600)
        let status = try sandbox.run(["status", "--json"] + sandbox.storeArguments)
        #expect(try jsonObject(status.stdout)["sealedWith"] as? String == "systemd-creds")

        // Every later command opens it with no passphrase, no prompt, no key in the environment.
        try sandbox.add("https://git.example.com", user: "alice", password: "s3cret")
        let got = try sandbox.run(["get", "https://git.example.com"] + sandbox.storeArguments)
        #expect(got.status == 0, "\(got.stderr)")
        #expect(got.stdout == "s3cret\n")
        let git = try sandbox.run(["git-credential", "get"] + sandbox.storeArguments, stdin: "protocol=https\nhost=git.example.com\n\n")
        #expect(git.stdout.contains("password=s3cret"), "\(git.stderr)")

        // Unsealed, the key is what opens the store: the key file must not be it, or hold it.
        let keyCopy = sandbox.root.appendingPathComponent("unsealed.key")
        let unsealed = try runProcess(URL(fileURLWithPath: SystemdCredsProbe.tool!), ["decrypt", "--name=credstore.key", "-", keyCopy.path],
                                      stdin: String(decoding: contents.dropFirst(8), as: UTF8.self))
        #expect(unsealed.status == 0, "\(unsealed.stderr)")
        let key = try [UInt8](Data(contentsOf: keyCopy))
        #expect(key.count == 32)
        #expect(!contents.contains(key), "the sealed key file holds the key in the clear")
    }

    @Test func anotherMachineCannotOpenIt() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.run(["init", "--seal-with", "systemd-creds"] + sandbox.storeArguments).status == 0)
        try sandbox.add("https://git.example.com", user: "alice", password: "s3cret")
        // Another machine is another host key: systemd-creds reads it from where this variable
        // says, and makes a new one there.
        let otherHostKey = sandbox.root.appendingPathComponent("other-machine.secret").path
        let other = try sandbox.run(["get", "https://git.example.com"] + sandbox.storeArguments,
                                    environment: ["SYSTEMD_CREDENTIAL_SECRET": otherHostKey])
        #expect(other.status == 77, "\(other.stdout)")
        #expect(other.stderr.contains("sealed for another machine"), "\(other.stderr)")
        #expect(other.stdout.isEmpty)
        #expect(other.stderrIsOneErrorLine)
    }

    @Test func sealingAnExistingKeyFileKeepsEveryCredential() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.run(["init"] + sandbox.storeArguments).status == 0)
        try sandbox.add("https://a.example.com", user: "alice", password: "first")
        try sandbox.add("https://b.example.com", user: "bob", password: "second", ["--persistence", "synchronizable"])
        let plain = try [UInt8](Data(contentsOf: keyFile(sandbox)))
        #expect(plain.count == 40)

        let sealed = try sandbox.run(["init", "--seal-with", "systemd-creds"] + sandbox.storeArguments)
        #expect(sealed.status == 0, "\(sealed.stderr)")
        #expect(sealed.stdout.contains("Sealed the key file"))
        let contents = try [UInt8](Data(contentsOf: keyFile(sandbox)))
        #expect(Array(contents.prefix(8)) == Self.sealedMagic)
        #expect(!contents.contains(Array(plain.dropFirst(8))), "the old key is still in the file")

        #expect(try sandbox.run(["get", "https://a.example.com"] + sandbox.storeArguments).stdout == "first\n")
        #expect(try sandbox.run(["get", "https://b.example.com"] + sandbox.storeArguments).stdout == "second\n")
        #expect(try sandbox.run(["verify"] + sandbox.storeArguments).status == 0)
        // Sealing again changes nothing.
        let again = try sandbox.run(["init", "--seal-with", "systemd-creds"] + sandbox.storeArguments)
        #expect(again.stdout.contains("already exists"))
        #expect(try [UInt8](Data(contentsOf: keyFile(sandbox))) == contents)
    }

    @Test func aUserSystemdCredsRefusesIsToldWhyWithoutAStoreLeftBehind() throws {
        // Before systemd 256 only root may use the host key: shown by running as nobody, from root.
        let setpriv = "/usr/bin/setpriv"
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: setpriv) else {
            print("skipped: needs root and setpriv(1) to run credstore as another user")
            return
        }
        let sandbox = try Sandbox()
        let folder = sandbox.root.appendingPathComponent("nobody")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        chown(sandbox.root.path, 65534, 65534)
        chown(folder.path, 65534, 65534)
        let store = folder.appendingPathComponent("credentials.db").path
        let result = try sandbox.runProgram(URL(fileURLWithPath: setpriv),
                                            ["--reuid=65534", "--regid=65534", "--clear-groups", Sandbox.binary.path,
                                             "init", "--seal-with", "systemd-creds", "--store", store])
        #expect(result.status == 69, "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("readable by root only"), "\(result.stderr)")
        #expect(result.stderrIsOneErrorLine)
        #expect(!FileManager.default.fileExists(atPath: store))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("store.key").path))
    }

    @Test func aPassphraseStoreHasNoKeyFileToSeal() throws {
        let sandbox = try Sandbox()
        let result = try sandbox.run(["init", "--passphrase", "--seal-with", "systemd-creds"] + sandbox.storeArguments,
                                     environment: ["CREDSTORE_PASSPHRASE": "correct horse"])
        #expect(result.status == 64)
        #expect(!FileManager.default.fileExists(atPath: sandbox.store.path))
    }
}
