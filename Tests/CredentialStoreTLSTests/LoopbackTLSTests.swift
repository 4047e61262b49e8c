import CredentialStore
import CredentialStoreCore
import CredentialStoreNIOSSL
import CredentialStoreTLS
import CredentialStoreTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS
import Testing

/// The bridge against a real TLS server on loopback (`openssl s_server` requiring a client
/// certificate from the test CA): an HTTP/1.1 GET whose TLS handler is made from the configuration
/// alone, as async-http-client makes its own, with the identity; and the pins through the
/// pipeline's verification callback, before and after the server's key is rotated.
@Suite struct LoopbackTLSTests {
    @Test func aClientWithTheIdentityGets200AndWithoutItTheHandshakeFails() async throws {
        let pki = try TestPKI()
        let server = try TLSTestServer(pki: pki, certificate: "server.pem", key: "server.key")
        defer { server.stop() }
        let identity = try ClientIdentity(pem: try pki.text("client.pem") + "\n" + pki.text("client.key"))
        let trust = ServerTrust(anchors: [try pki.der("ca.pem")])

        let withIdentity = try TLSConfiguration.clientConfiguration(identity: identity, trust: trust)
        #expect(try await status(port: server.port, configuration: withIdentity) == 200)

        let withoutIdentity = try TLSConfiguration.clientConfiguration(identity: nil, trust: trust)
        await expectFailure { try await status(port: server.port, configuration: withoutIdentity) }
    }

    @Test func theStoresIdentityAndTrustForTheHostOpenTheServer() async throws {
        let pki = try TestPKI()
        let server = try TLSTestServer(pki: pki, certificate: "server.pem", key: "server.key")
        defer { server.stop() }
        let store = try TemporaryStore()
        let storage = try CredentialStorage(at: store.databaseURL, key: .keyFile(store.keyFileURL), rollbackAnchor: .directory(store.anchorDirectory))
        try storage.tls.setIdentity(try ClientIdentity(pem: try pki.text("client.pem") + (try pki.text("client.key"))), for: TLSEndpoint(host: "127.0.0.1"))
        try storage.tls.setServerTrust(ServerTrust(anchors: [try pki.der("ca.pem")]), for: TLSEndpoint(host: "127.0.0.1"))

        #expect(try await status(port: server.port, configuration: try storage.tls.clientConfiguration(forHost: "127.0.0.1", port: server.port)) == 200)
        // Another host's configuration carries no identity: the server refuses it.
        let elsewhere = try storage.tls.clientConfiguration(forHost: "other.example.com", port: server.port)
        #expect(elsewhere.certificateChain.isEmpty)
        #expect(try storage.tls.removeIdentity(for: TLSEndpoint(host: "127.0.0.1")))
        await expectFailure { try await status(port: server.port, configuration: try storage.tls.clientConfiguration(forHost: "127.0.0.1", port: server.port)) }

        // Pins from the store, through the NIO handlers: the server's pin opens, a wrong one does not.
        try storage.tls.setIdentity(try ClientIdentity(pem: try pki.text("client.pem") + (try pki.text("client.key"))), for: TLSEndpoint(host: "127.0.0.1"))
        let identity = try #require(try storage.tls.identity(forHost: "127.0.0.1", port: server.port))
        var trust = try storage.tls.serverTrust(forHost: "127.0.0.1", port: server.port) ?? ServerTrust()
        trust.pins = [try #require(PublicKeyPin(certificate: try pki.der("server.pem")))]
        try storage.tls.setServerTrust(trust, for: TLSEndpoint(host: "127.0.0.1"))
        try await handshake(port: server.port, identity: identity, trust: try storage.tls.serverTrust(forHost: "127.0.0.1", port: server.port) ?? ServerTrust())
        trust.pins = [try #require(PublicKeyPin(digest: Array(repeating: 1, count: 32)))]
        try storage.tls.setServerTrust(trust, for: TLSEndpoint(host: "127.0.0.1"))
        await #expect(throws: ServerTrustError.noPinnedKey) {
            try await handshake(port: server.port, identity: identity, trust: try storage.tls.serverTrust(forHost: "127.0.0.1", port: server.port) ?? ServerTrust())
        }
    }

    @Test func aConfigurationForPinnedTrustFailsClosedWhereNoCallbackRuns() async throws {
        let pki = try TestPKI()
        let server = try TLSTestServer(pki: pki, certificate: "server.pem", key: "server.key")
        defer { server.stop() }
        let identity = try ClientIdentity(pem: try pki.text("client.pem") + "\n" + pki.text("client.key"))
        // Even the right pin: a client that builds its handler from the configuration alone
        // (async-http-client does) cannot check it, so it must not connect.
        let pinned = ServerTrust(pins: [try #require(PublicKeyPin(certificate: try pki.der("server.pem")))], anchors: [try pki.der("ca.pem")])
        let configuration = try TLSConfiguration.clientConfiguration(identity: identity, trust: pinned)
        await expectFailure { try await status(port: server.port, configuration: configuration) }
    }

    @Test func rightPinPassesWrongPinFailsWithTheTypedReason() async throws {
        let pki = try TestPKI()
        let server = try TLSTestServer(pki: pki, certificate: "server.pem", key: "server.key")
        defer { server.stop() }
        let identity = try ClientIdentity(pem: try pki.text("client.pem") + "\n" + pki.text("client.key"))
        let ca = try pki.der("ca.pem")
        let current = try #require(PublicKeyPin(certificate: try pki.der("server.pem")))
        let wrong = try #require(PublicKeyPin(digest: Array(repeating: 0x5A, count: 32)))

        try await handshake(port: server.port, identity: identity, trust: ServerTrust(pins: [current], anchors: [ca]))
        await #expect(throws: ServerTrustError.noPinnedKey) {
            try await handshake(port: server.port, identity: identity, trust: ServerTrust(pins: [wrong], anchors: [ca]))
        }
        // Without the anchor the chain itself is refused, before any pin is looked at.
        let error = await #expect(throws: ServerTrustError.self) {
            try await handshake(port: server.port, identity: identity, trust: ServerTrust(pins: [current]))
        }
        if case .untrustedChain = error {} else { Issue.record("expected untrustedChain, got \(String(describing: error))") }
        await #expect(throws: ServerTrustError.nameMismatch(host: "localhost.invalid")) {
            try await handshake(port: server.port, host: "localhost.invalid", identity: identity, trust: ServerTrust(pins: [current], anchors: [ca]))
        }
    }

    @Test func backupPinPassesAfterTheServersKeyIsRotatedToIt() async throws {
        let pki = try TestPKI()
        let identity = try ClientIdentity(pem: try pki.text("client.pem") + "\n" + pki.text("client.key"))
        let ca = try pki.der("ca.pem")
        let current = try #require(PublicKeyPin(certificate: try pki.der("server.pem")))
        // The backup pin is computed from the key alone, as it is pinned before its certificate exists.
        try pki.openssl(["pkey", "-in", "backup.key", "-pubout", "-outform", "der", "-out", "backup.spki"])
        let backup = PublicKeyPin(subjectPublicKeyInfo: try pki.bytes("backup.spki"))
        let both = ServerTrust(pins: [current, backup], anchors: [ca])
        let oldOnly = ServerTrust(pins: [current], anchors: [ca])

        let before = try TLSTestServer(pki: pki, certificate: "server.pem", key: "server.key")
        try await handshake(port: before.port, identity: identity, trust: both)
        try await handshake(port: before.port, identity: identity, trust: oldOnly)
        before.stop()

        let after = try TLSTestServer(pki: pki, certificate: "backup.pem", key: "backup.key")
        defer { after.stop() }
        try await handshake(port: after.port, identity: identity, trust: both)
        await #expect(throws: ServerTrustError.noPinnedKey) {
            try await handshake(port: after.port, identity: identity, trust: oldOnly)
        }
    }

    // MARK: - Helpers

    /// Records an issue unless `body` throws.
    private func expectFailure(sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> some Any) async {
        do {
            _ = try await body()
            Issue.record("expected a failure", sourceLocation: sourceLocation)
        } catch {}
    }

    /// The status of `GET https://127.0.0.1:port/` over HTTP/1.1, through a TLS handler made from
    /// `configuration` alone: no verification callback, no name to check but the one an IP
    /// address gives (async-http-client does the same for an address).
    private func status(port: Int, configuration: TLSConfiguration) async throws -> UInt {
        let context = try NIOSSLContext(configuration: configuration)
        let group = MultiThreadedEventLoopGroup.singleton
        let response = group.next().makePromise(of: UInt.self)
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: nil))
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(FirstOutcome<HTTPClientResponsePart, UInt>(response, read: { part in
                        if case .head(let head) = part { head.status.code } else { nil }
                    }))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/")
        head.headers.add(name: "Host", value: "127.0.0.1:\(port)")
        head.headers.add(name: "Connection", value: "close")
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        do {
            let status = try await response.futureResult.get()
            try? await channel.close()
            return status
        } catch {
            try? await channel.close()
            throw error
        }
    }

    /// Connects to 127.0.0.1:`port` with the bridge's handlers for `host` and returns once the TLS
    /// handshake completed; throws what the pipeline reported instead.
    private func handshake(port: Int, host: String = "127.0.0.1", identity: ClientIdentity, trust: ServerTrust) async throws {
        let context = try NIOSSLContext(configuration: try TLSConfiguration.clientConfiguration(identity: identity, trust: trust))
        let group = MultiThreadedEventLoopGroup.singleton
        let outcome = group.next().makePromise(of: Void.self)
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addTLSClientHandlers(context: context, host: host, trust: trust)
                    try channel.pipeline.syncOperations.addHandler(FirstOutcome<NIOAny, Void>(outcome, event: { event in
                        if case .handshakeCompleted = event as? TLSUserEvent { () } else { nil }
                    }))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        do {
            try await outcome.futureResult.get()
            try? await channel.close()
        } catch {
            try? await channel.close()
            throw error
        }
    }
}

/// Completes a promise with the first of: the value `read` finds in what the pipeline reads, or
/// `event` in a user event; an error; the channel's end.
private final class FirstOutcome<In, Value: Sendable>: ChannelInboundHandler {
    typealias InboundIn = In
    private let promise: EventLoopPromise<Value>
    private let read: ((In) -> Value?)?
    private let event: (Any) -> Value?
    private var done = false

    init(_ promise: EventLoopPromise<Value>, read: ((In) -> Value?)? = nil, event: @escaping (Any) -> Value? = { _ in nil }) {
        self.promise = promise
        self.read = read
        self.event = event
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if let read, let value = read(unwrapInboundIn(data)) { finish(.success(value)) }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let value = self.event(event) { finish(.success(value)) }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(error))
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(ChannelError.eof))
        context.fireChannelInactive()
    }

    private func finish(_ result: Result<Value, any Error>) {
        guard !done else { return }
        done = true
        promise.completeWith(result)
    }
}
