public import ArgumentParser

/// The `credstore` command: administers a credential store.
public struct CredstoreCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "credstore",
        abstract: "Administer a credstore credential store.",
        version: "0.1.0")

    public init() {}
}
