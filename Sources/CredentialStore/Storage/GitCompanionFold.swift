import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Migration 0009's keyed step: the git helper's hidden companions folded into their credentials.
///
/// Before credentials had details, `credstore git-credential` kept what git sends beside a
/// password (`password_expiry_utc`, `oauth_refresh_token`) in a second credential: same host, port,
/// realm and user, protocol `git-credential-meta+PROTO`, the values in its password. `credstore
/// list` showed it as an entry no user could explain. Each companion's values become the
/// credential's ``/CredentialStoreCore/Credential/expires`` and ``/CredentialStoreCore/Credential/refreshToken``, and the companion is
/// removed (a synchronizable one with a tombstone, so that synced stores of this version drop
/// theirs too); a companion whose credential is gone is removed alone.
enum GitCompanionFold {
    /// The protocol prefix of a companion's space.
    static let protocolPrefix = "git-credential-meta+"

    /// Folds every companion in the store, through a ``Mutation`` on the migration's transaction
    /// (so the seal tree, the sync registers and the change log see it as any write), and folds
    /// the seal.
    static func run(_ writer: any CredentialRepositoryWriting, pipeline: WritePipeline) throws {
        let keys = pipeline.keys
        var companions: [(space: ProtectionSpace, credential: Credential)] = []
        for row in try writer.allCredentials() {
            let space = try keys.decryptSpace(row)
            guard space.protocol?.hasPrefix(protocolPrefix) == true else { continue }
            companions.append((space, try keys.decryptCredential(row)))
        }
        guard !companions.isEmpty else { return }
        let keeper = pipeline.syncRegisters
        pipeline.syncRegisters = SyncRegisterKeeper()
        defer { pipeline.syncRegisters = keeper }
        var mutation = Mutation(
            transaction: writer, session: SessionTier(), keys: keys, writer: Sodium.randomBytes(16), processID: getpid(),
            clock: pipeline.clock)
        let processID = getpid()
        let writerID = mutation.writer
        mutation.changeLogSink = { try pipeline.appendChangeLog($0, writer: writerID, processID: processID, into: writer) }
        for (companionSpace, companion) in companions {
            let values = decode(companion.password)
            let space = ProtectionSpace(
                host: companionSpace.host, port: companionSpace.port,
                protocol: String(companionSpace.protocol!.dropFirst(protocolPrefix.count)), realm: companionSpace.realm,
                authenticationMethod: companionSpace.authenticationMethod)
            if var credential = try mutation.storedCredential(user: companion.user, in: space),
               credential.expires == nil, credential.refreshToken == nil {
                credential.expiresEpochSeconds = values.expiry
                credential.refreshToken = values.refreshToken
                if (try? credential.validate(in: space)) != nil {
                    try mutation.set(credential, in: space, makeDefault: false, fields: .replacingDetails)
                }
            }
            _ = try mutation.remove(user: companion.user, in: companionSpace, options: .removeSynchronizable)
        }
        try pipeline.syncRegisters?.keepRegisters(mutation.ledger)
        try pipeline.foldSeal(into: writer)
        try mutation.flushChangeLog()
    }

    /// The values of a companion's password: `key=value` pairs joined by `&`, each value
    /// percent-encoded; or, as the first versions wrote it, one `key=value` per line.
    static func decode(_ encoded: String) -> (expiry: Int64?, refreshToken: String?) {
        var values: (expiry: Int64?, refreshToken: String?) = (nil, nil)
        // Scalars, not Characters: a legacy value ending in CR would fuse with its line's LF.
        let legacy = encoded.unicodeScalars.contains("\n")
        for pair in encoded.unicodeScalars.split(separator: legacy ? "\n" : "&") {
            guard let equals = pair.firstIndex(of: "=") else { continue }
            let raw = String(String.UnicodeScalarView(pair[pair.index(after: equals)...]))
            guard let value = legacy ? raw : raw.removingPercentEncoding else { continue }
            switch String(String.UnicodeScalarView(pair[..<equals])) {
            case "password_expiry_utc": values.expiry = Int64(value)
            case "oauth_refresh_token": values.refreshToken = value
            default: continue
            }
        }
        return values
    }
}
