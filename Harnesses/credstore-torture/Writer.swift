import CredentialStore
import Foundation
import SeededRandom

/// The key space of one writer process: 16 users over 4 spaces, all its own.
enum WriterKeys {
    static let count = 16

    static func space(prefix: String, key: Int) -> ProtectionSpace {
        ProtectionSpace(host: "\(prefix)-\(key % 4).torture", port: 443, protocol: "https", realm: nil)
    }

    static func user(key: Int) -> String { "u\(key)" }
}

/// `credstore-torture writer DB KEYFILE PREFIX SEED`: sets and removes its own credentials until
/// killed. Before each call it prints its intent (`I S host user persistence password` or
/// `I R host user`), and `A` once the call has returned: an `A` line is an acknowledged write.
/// KEYFILE `-` means a passphrase store, the passphrase in `TORTURE_PASSPHRASE`.
func writerMain(_ arguments: [String]) -> Never {
    guard arguments.count >= 4, let seed = UInt64(arguments[3]) else { fail("usage: writer DB KEYFILE PREFIX SEED") }
    let prefix = arguments[2]
    var random = SplitMix(seed: seed)
    let storage: CredentialStorage
    do {
        storage = try openStore(URL(fileURLWithPath: arguments[0]), key: storeKey(keyFile: arguments[1]))
    } catch {
        emit("E open \(describe(error))")
        exit(3)
    }
    emit("O")
    var operation = 0
    while true {
        operation += 1
        let key = Int.random(in: 0..<WriterKeys.count, using: &random)
        let space = WriterKeys.space(prefix: prefix, key: key)
        let user = WriterKeys.user(key: key)
        do {
            if Double.random(in: 0..<1, using: &random) < 0.75 {
                let persistence: Persistence = Double.random(in: 0..<1, using: &random) < 0.8 ? .permanent : .synchronizable
                let password = "pw-\(prefix)-\(operation)"
                emit("I S \(space.host) \(user) \(persistence.rawValue) \(password)")
                try storage.set(Credential(user: user, password: password, persistence: persistence), for: space)
            } else {
                emit("I R \(space.host) \(user)")
                _ = try storage.remove(user: user, for: space, options: [.removeSynchronizable])
            }
            emit("A")
        } catch {
            emit("E write \(describe(error))")
            exit(3)
        }
    }
}

/// `credstore-torture open DB KEYFILE`: opens the store (migrating it if it is old) and exits.
func openMain(_ arguments: [String]) -> Never {
    guard arguments.count >= 2 else { fail("usage: open DB KEYFILE") }
    emit("S \(Date().timeIntervalSince1970)")
    do {
        _ = try openStore(URL(fileURLWithPath: arguments[0]), key: storeKey(keyFile: arguments[1]))
        emit("D \(Date().timeIntervalSince1970)")
        exit(0)
    } catch {
        emit("E open \(describe(error))")
        exit(3)
    }
}
