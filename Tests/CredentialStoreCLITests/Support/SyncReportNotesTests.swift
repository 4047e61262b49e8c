import CredentialStore
import CredentialStoreCLI
import Foundation
import Testing

/// The notes `sync` and `import` print for a report's dropped credentials and held-back changes.
struct SyncReportNotesTests {
    let space = ProtectionSpace(host: "api.example.com", port: 443, protocol: "https", realm: "API")

    @Test func aDroppedCredentialIsNamedWithAnAddThatSetsItAgain() throws {
        var report = ImportReport()
        report.dropped = [DroppedCredential(space: space, user: "bob")]
        let lines = SyncReportNotes.lines(report, bundle: "peer.csbundle")
        #expect(lines.count == 1)
        let line = try #require(lines.first)
        #expect(line.hasPrefix("credstore: note: peer.csbundle: dropped bob at ") && line.hasSuffix("\n"), "\(line)")

        // The advised command works as given: it sets the credential again, synchronizable.
        let command = try #require(line.split(separator: "`").dropFirst().first.map(String.init))
        let words = command.split(separator: " ").map(String.init)
        #expect(words.prefix(2) == ["credstore", "add"], "\(command)")
        let sandbox = try Sandbox()
        let added = try sandbox.run(Array(words.dropFirst()) + sandbox.storeArguments, stdin: "again\n")
        #expect(added.status == 0, "\(added.stderr)")
        let listed = try sandbox.run(["list", "--json"] + sandbox.storeArguments)
        #expect(listed.stdout.contains("\"bob\"") && listed.stdout.contains("synchronizable"), "\(listed.stdout)")
    }

    @Test func heldBackChangesNameTheMachineWhoseClockIsAheadNotTheRelay() {
        var report = ImportReport()
        report.heldBack = 2
        report.clocksAhead = ["0123456789abcdef0123456789abcdef"]
        let lines = SyncReportNotes.lines(report, bundle: "relay.csbundle")
        #expect(lines == [
            "credstore: note: relay.csbundle: 2 changes held back: made on the machine that writes 0123456789abcdef0123456789abcdef.csbundle, "
                + "more than 24 hours ahead of this machine's clock; fix the clock there (or this machine's, if it is behind): they merge once the clocks agree\n",
        ])
    }

    @Test func aReportWithNothingDroppedOrHeldBackHasNoNotes() {
        #expect(SyncReportNotes.lines(ImportReport(added: 3), bundle: "peer.csbundle").isEmpty)
    }
}
