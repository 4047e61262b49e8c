import ArgumentParser
import CredentialStore
import CredentialStoreFormats

/// The URL and options that name a protection space: `URL [--realm R] [--method M] [--proxy T]`.
struct SpaceOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("The server's URL, such as https://api.example.com (for a proxy, its host and port).", valueName: "url"))
    var url: String

    @Option(help: "The realm the server names in its challenge; compared exactly.")
    var realm: String?

    @Option(help: "The authentication method; `any` (the default) answers Basic and Digest.")
    var method: MethodName?

    @Option(help: "A proxy space of this type rather than a server space: the URL gives the proxy's host and port.")
    var proxy: ProxyName?

    /// The space these options name, as a plain value.
    var request: SpaceRequest {
        SpaceRequest(url: url, realm: realm, method: method, proxy: proxy)
    }

    /// The exact space these options name.
    func protectionSpace() throws -> ProtectionSpace {
        try request.protectionSpace()
    }
}
