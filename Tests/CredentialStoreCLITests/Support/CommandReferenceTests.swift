import ArgumentParser
import CredentialStoreCLI
import Foundation
import Testing

/// docs/cli.md is the reference people read: its contents list names every command the binary
/// knows, each linked to a section that exists.
struct CommandReferenceTests {
    static let reference: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("docs/cli.md"), encoding: .utf8)) ?? ""
    }()

    /// The `[name](#anchor)` links of the contents list's Commands entry.
    static var listed: [(name: String, anchor: String)] {
        guard let start = reference.range(of: "- [Commands](#commands):"),
              let end = reference.range(of: "\n- [", range: start.upperBound..<reference.endIndex)
        else { return [] }
        let entry = reference[start.upperBound..<end.lowerBound]
        let link = /\[([a-z-]+)\]\(#([a-z0-9-]+)\)/
        return entry.matches(of: link).map { (String($0.output.1), String($0.output.2)) }
    }

    /// The anchor GitHub gives a heading: lower case, spaces to dashes, punctuation dropped.
    static func anchor(_ heading: Substring) -> String {
        String(heading.lowercased().compactMap { $0 == " " ? "-" : ($0.isLetter || $0.isNumber || $0 == "-" ? $0 : nil) })
    }

    @Test func theContentsListNamesEveryCommandTheBinaryKnows() {
        let commands = CredstoreCommand.configuration.subcommands.compactMap { $0.configuration.commandName }
        #expect(commands.count > 20, "the binary's commands are read")
        let listed = Set(Self.listed.map(\.name))
        let missing = commands.filter { !listed.contains($0) }
        #expect(missing.isEmpty, "docs/cli.md's contents list lacks \(missing)")
        let unknown = listed.subtracting(commands)
        #expect(unknown.isEmpty, "docs/cli.md's contents list names commands the binary does not know: \(unknown)")
    }

    @Test func everyCommandLinkLeadsToASection() {
        let headings = Set(Self.reference.split(separator: "\n").filter { $0.hasPrefix("#") }.map { line in
            Self.anchor(line.drop { $0 == "#" }.drop { $0 == " " })
        })
        for (name, anchor) in Self.listed {
            #expect(headings.contains(anchor), "\(name) links to #\(anchor), which no heading of docs/cli.md makes")
        }
    }
}
