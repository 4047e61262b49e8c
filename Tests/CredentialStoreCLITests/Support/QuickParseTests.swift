import ArgumentParser
import CredentialStoreCLI
import Testing

/// The hand-read `get` must mean what ArgumentParser reads, wherever it answers at all.
struct QuickParseTests {
    static let agreeing: [[String]] = [
        ["get", "https://api.example.com"],
        ["get", "https://api.example.com", "--json"],
        ["get", "--user", "alice", "https://api.example.com"],
        ["get", "https://api.example.com", "--user", "alice", "--realm", "Staff Area", "--store", "/tmp/s.db", "--key-file", "/tmp/k"],
        ["get", "https://api.example.com", "--user=alice", "--realm=R", "--store=/tmp/a=b.db", "--json"],
        ["get", "https://api.example.com", "--realm", ""],
        ["get", "--json", "https://api.example.com", "--realm", "R"],
    ]

    @Test(arguments: agreeing)
    func theQuickParserAgreesWithArgumentParser(_ arguments: [String]) throws {
        let quick = try #require(Lookup(quickParsing: arguments))
        let parsed = try #require(try Lookup.parsedByArgumentParser(arguments))
        #expect(quick == parsed)
    }

    static let leftToArgumentParser: [[String]] = [
        ["get"],
        ["get", "--help"],
        ["get", "-h"],
        ["get", "https://a.example.com", "https://b.example.com"],
        ["get", "https://a.example.com", "--user"],
        ["get", "https://a.example.com", "--user", "--json"],
        ["get", "https://a.example.com", "--user", "a", "--user", "b"],
        ["get", "https://a.example.com", "--method", "basic"],
        ["get", "https://a.example.com", "--proxy", "http"],
        ["get", "https://a.example.com", "--json=yes"],
        ["get", "https://a.example.com", "--realm="],
        ["get", "https://a.example.com", "--", "x"],
        ["get", "https://a.example.com", "--bogus"],
        ["list"],
        ["help", "get"],
        [],
    ]

    @Test(arguments: leftToArgumentParser)
    func anythingElseIsLeftToArgumentParser(_ arguments: [String]) {
        #expect(Lookup(quickParsing: arguments) == nil)
    }
}
