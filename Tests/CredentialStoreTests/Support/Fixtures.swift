@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport
import Foundation
import Testing

/// Shorthands for the spaces and credentials tests use.
enum Fixture {
    static func space(_ host: String = "api.example.com", realm: String? = nil, method: AuthenticationMethod? = nil) -> ProtectionSpace {
        ProtectionSpace(host: host, port: 443, protocol: "https", realm: realm, authenticationMethod: method)
    }

    static func credential(_ user: String, _ password: String = "pw", _ persistence: Persistence = .permanent) -> Credential {
        Credential(user: user, password: password, persistence: persistence)
    }
}

/// The helper executable built beside the test bundle (Tests/Helper).
func helperExecutable() -> URL {
    builtExecutable("credstore-test-helper")
}

/// Runs the helper with `arguments`, feeding `input` on stdin; returns its exit status and stderr.
@discardableResult
func runHelper(_ arguments: [String], input: String = "") throws -> (status: Int32, stderr: String) {
    let result = try runProcess(helperExecutable(), arguments, stdin: input)
    return (result.status, result.stderr)
}

/// Collects the changes a stream delivers until `count` have arrived or `timeout` passes.
func collect(_ stream: AsyncStream<CredentialChange>, count: Int, timeout: Duration) async -> [CredentialChange] {
    await withTaskGroup(of: [CredentialChange]?.self) { group in
        group.addTask {
            var received: [CredentialChange] = []
            for await change in stream {
                received.append(change)
                if received.count >= count { break }
            }
            return received
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        var best: [CredentialChange] = []
        for await result in group {
            if let result {
                best = result
                group.cancelAll()
                break
            }
            group.cancelAll()
            break
        }
        return best
    }
}

/// Expects `body` to throw a ``CredentialStorageError`` with `code`, and a message that names no secret.
func expectError<T>(
    _ code: CredentialStorageError.Code, secrets: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T
) {
    let error = #expect(throws: CredentialStorageError.self, sourceLocation: sourceLocation) { _ = try body() }
    #expect(error?.code == code, sourceLocation: sourceLocation)
    for secret in secrets {
        #expect(error?.message.contains(secret) == false, "the message leaks a secret", sourceLocation: sourceLocation)
    }
}
