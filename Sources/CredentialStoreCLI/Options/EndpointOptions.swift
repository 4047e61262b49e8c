import ArgumentParser
import CredentialStore

/// `--host H [--port N]` or `--any-host`: where a TLS identity or a server trust applies.
struct EndpointOptions: ParsableArguments {
    @Option(help: "The server's host name or address.")
    var host: String?

    @Option(help: "The server's port; without it, every port of the host.")
    var port: Int?

    @Flag(help: "Every host (an identity offered to any server that asks for one).")
    var anyHost = false

    func validate() throws {
        if anyHost, host != nil || port != nil {
            throw ValidationError("--any-host excludes --host and --port")
        }
        if !anyHost, host == nil {
            throw ValidationError("name the server with --host (and --port), or give --any-host")
        }
        if let port, !(1...65535).contains(port) {
            throw ValidationError("--port must be 1 to 65535")
        }
    }

    var endpoint: TLSEndpoint {
        anyHost ? .anyHost : TLSEndpoint(host: host, port: port)
    }
}
