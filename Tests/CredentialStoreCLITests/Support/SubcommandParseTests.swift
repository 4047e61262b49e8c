import ArgumentParser
import CredentialStoreCLI
import Testing

/// `credstore` parses a command line through the named subcommand's type alone (it starts faster
/// so); wherever that parse answers, it must mean what the full parse from the root means, and
/// whatever it leaves (help, version, completion, every error) goes to the full parse.
struct SubcommandParseTests {
    static let url = "https://api.example.com"

    /// Every command, in the forms scripts and git use.
    static let agreeing: [[String]] = [
        ["get", url],
        ["get", url, "--json"],
        ["get", "--user", "alice", url],
        ["get", url, "--user", "alice", "--realm", "Staff Area", "--store", "/tmp/s.db", "--key-file", "/tmp/k"],
        ["get", url, "--user=alice", "--realm=R", "--store=/tmp/a=b.db", "--json"],
        ["get", url, "--realm", ""],
        ["get", "--json", url, "--realm", "R"],
        ["get", url, "--realm", "R", "--method", "basic"],
        ["get", url, "--method", "any"],
        ["get", url, "--method", "default", "--json"],
        ["get", "proxy.example.com:3128", "--proxy", "http", "--user", "u"],
        ["get", url, "--user", "a", "--user", "b"],
        ["get", "help"],
        ["add", url, "--user", "alice", "--default", "--persistence", "synchronizable"],
        ["list", "--json"],
        ["remove", url, "--user", "alice", "--synchronizable"],
        ["default", url, "--user", "alice", "--realm", "R"],
        ["init", "--passphrase"],
        ["passwd"],
        ["rekey", "--store", "/tmp/s.db"],
        ["verify"],
        ["watch", "--json"],
        ["export", "/tmp/b.csbundle", "--recipient", "csdev1:abc"],
        ["import", "/tmp/g", "--from", "git-credentials", "--dry-run"],
        ["device", "show"],
        ["device", "trust", "csdev1:abc", "--json"],
        ["device", "list"],
        ["device", "untrust", "csdev1:abc"],
        ["sync", "/tmp/shared"],
        ["git-credential", "get"],
        ["git-credential", "store"],
        ["git-credential", "--store", "/tmp/s.db", "erase"],
        ["git-credential", "capability"],
        ["netrc", "import", "/tmp/netrc"],
        ["netrc", "export", "/tmp/netrc", "--json"],
    ]

    @Test(arguments: agreeing)
    func theSubcommandsParseAgreesWithTheRoots(_ arguments: [String]) throws {
        let fast = try #require(CredstoreCommand.parsedThroughItsSubcommand(arguments))
        let full = try CredstoreCommand.parseAsRoot(arguments)
        #expect(type(of: fast) == type(of: full))
        #expect(Self.described(fast) == Self.described(full))
    }

    /// Help, version, completion and every usage error: the full parse answers them as before.
    static let leftToTheRoot: [[String]] = [
        [],
        ["--help"],
        ["--version"],
        ["help", "get"],
        ["get"],
        ["get", "--help"],
        ["get", "-h"],
        ["get", "--version"],
        ["get", url, "--generate-completion-script", "bash"],
        ["get", "https://a.example.com", "https://b.example.com"],
        ["get", url, "--user"],
        ["get", url, "--user", "--json"],
        ["get", url, "--", "--not-an-option"],
        ["get", url, "--method", "bogus"],
        ["get", url, "--json=yes"],
        ["get", url, "--bogus"],
        ["device"],
        ["device", "--help"],
        ["device", "bogus"],
        ["git-credential"],
        ["git-credential", "get", "--help"],
        ["netrc", "import"],
        ["bogus"],
        ["--store", "/tmp/s.db", "get", url],
    ]

    @Test(arguments: leftToTheRoot)
    func anythingElseIsLeftToTheRoot(_ arguments: [String]) {
        #expect(CredstoreCommand.parsedThroughItsSubcommand(arguments) == nil)
    }

    /// The parsed values, property wrappers included.
    private static func described(_ command: any ParsableCommand) -> String {
        var text = ""
        dump(command, to: &text)
        return text
    }
}
