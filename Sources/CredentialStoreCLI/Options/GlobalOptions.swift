import ArgumentParser

/// The options every command takes, after its name: which store, which key file, JSON or text.
struct GlobalOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The store's database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).",
            valueName: "path"),
        completion: .file())
    var store: String?

    @Option(
        help: ArgumentHelp(
            "The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).",
            valueName: "path"),
        completion: .file())
    var keyFile: String?

    @Flag(help: "Print JSON, for scripts (schemas in docs/cli.md).")
    var json = false

    /// The store these options name, with the environment filling in what they leave out.
    func location(in console: Console) -> StoreAccess {
        StoreAccess(store: store ?? console.variable("CREDSTORE_STORE"),
                      keyFile: keyFile ?? console.variable("CREDSTORE_KEY_FILE"),
                      environment: console.environment)
    }
}
