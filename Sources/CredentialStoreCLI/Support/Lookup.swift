import ArgumentParser
import CredentialStore
import CredentialStoreFormats
import Foundation

/// A `get`: the one command on the hot path of scripts and tools, apart from how the command line
/// said it, so that the synchronous executor can end the process as soon as it has printed.
package struct Lookup: Equatable {
    var space: SpaceRequest
    var user: String?
    var store: String?
    var keyFile: String?
    var json = false

    /// What ``run(_:then:)`` does once it has printed.
    enum Completion {
        /// Returns to the caller, which releases the store: in-process callers (the tests,
        /// ``CredstoreCommand/execute(_:)``).
        case returnToCaller
        /// Ends the process with status 0, leaving the open store to the kernel. Closing it would
        /// only cost time, about a fifth of such a process: SQLite's close takes locks and tries
        /// a checkpoint, libdispatch starts a thread to dispose of the connection's queue, and
        /// each key buffer is unlocked and unmapped, all of which process exit does as well. The
        /// key buffers' pages are locked (never swapped), and the kernel clears freed pages
        /// before it hands them out again.
        case exitProcess
    }

    func run(_ console: Console, then completion: Completion = .returnToCaller) throws {
        let url = try space.parsedURL()
        let exact = try space.protectionSpace()
        let location = StoreAccess(store: store ?? console.variable("CREDSTORE_STORE"),
                                     keyFile: keyFile ?? console.variable("CREDSTORE_KEY_FILE"),
                                     environment: console.environment)
        // Only a miss pays for describing the space, and for looking at the other ports.
        func missing(in storage: CredentialStorage? = nil) -> CommandFailure {
            // Credentials in the space but no default (none chosen among several): the remedy is
            // to name one, not to add another.
            if user == nil, let storage, let held = try? Self.usersWithoutDefault(in: exact, storage: storage) {
                // `default` names the space exactly: the method too, when the users are a
                // compatible method's.
                var request = space
                if held.space != exact { request.method = MethodName.allCases.first { $0.authenticationMethod == held.space.authenticationMethod } }
                return CommandFailure(.notFound, "\(Describe.space(held.space)) holds credentials of \(held.users.map(Describe.cell).joined(separator: ", ")) and none is its default; "
                    + "name one with --user, or choose one with `credstore default \(request.arguments) --user NAME`")
            }
            let elsewhere = storage.map { Self.otherPorts(of: exact, user: user, in: $0) } ?? []
            let hint = elsewhere.isEmpty ? "" : "; the same host has one at another port: \(elsewhere.map(Describe.space).joined(separator: ", ")) (give the port in the URL)"
            return CommandFailure(.notFound, "no credential for \(user.map { "\($0) at " } ?? "")\(Describe.space(exact))\(hint); add one with `credstore add \(space.arguments) --user \(user.map(ShellWords.quoted) ?? "NAME")`")
        }
        // Opening checks the seal's root; the lookup checks its rows against the seal tree.
        let storage = try location.openExisting(console, orFail: missing())

        let match: (space: ProtectionSpace, credential: Credential)
        // Whether the one credential that answers has expired: `get` then fails with 75, and
        // only --json shows it (marked expired, with the refresh token that may renew it).
        var hasExpired = false
        if let user {
            // As without --user: the user's credential in the space, else in the first compatible
            // method's space of the realm (one stored for Basic answers a URL without a method).
            guard let found = try Self.credential(of: user, in: exact, storage: storage) else { throw missing(in: storage) }
            match = found
            hasExpired = found.credential.isExpired(at: Date())
        } else if let found = try storage.defaultCredentialAndSpace(for: exact) {
            // Perhaps the default of the realm under a compatible method: --json names that space.
            match = found
        } else if !space.isExact, space.realm == nil, let found = try Self.bestMatch(for: url, in: storage) {
            // The one realm on the origin that answers: --json names its space.
            match = (found.space, found.credential)
        } else if let found = try Self.expiredAnswer(to: space, exact: exact, in: storage) {
            (match, hasExpired) = (found, true)
        } else {
            throw missing(in: storage)
        }

        if json {
            let credential = match.credential
            console.output.write(JSONValue.object([
                ("user", .string(credential.user)),
                ("password", .string(credential.password)),
                ("space", Describe.spaceJSON(match.space)),
            ] + Describe.detailsJSON(credential, withSecrets: true)).rendered + "\n")
        }
        if hasExpired {
            throw ExpiredAnswer.failure(match.credential, in: match.space, url: space.url)
        }
        if !json {
            // The password is the one line a script reads: one stored before the store refused
            // line breaks would hand the script a different value and a second line.
            guard FieldRules.isLineSafe(match.credential.password) else {
                throw CommandFailure(.dataError, "the stored password holds a line break or NUL, so it cannot be printed as one line; read it with --json")
            }
            console.output.write(match.credential.password + "\n")
        }
        if completion == .exitProcess {
            withExtendedLifetime(storage) { exit(ExitCode.success.rawValue) }
        }
    }

    /// On a miss, the expired credential that would have answered, with its space: the exact
    /// space's default (or a compatible method's), else, for a URL without --realm, --method or
    /// --proxy, the one realm's default on its scheme, host and port. Only a miss pays for these
    /// reads.
    ///
    /// - Throws: an expired failure (75) when the defaults of several realms have all expired.
    private static func expiredAnswer(to request: SpaceRequest, exact: ProtectionSpace, in storage: CredentialStorage) throws -> (space: ProtectionSpace, credential: Credential)? {
        if let found = try storage.defaultCredentialAndSpace(for: exact, includingExpired: true) { return found }
        guard !request.isExact, request.realm == nil else { return nil }
        // The spaces `defaultCredential(answering: .request(url))` chooses among: those
        // on the origin whose credentials may go out as Basic.
        let sendable = AuthenticationMethod.sentAsBasic
        let expired = try storage.entries(onOriginOf: exact).filter {
            $0.isDefaultEvenIfExpired && !$0.isDefault && $0.space != exact && $0.space.proxyType == nil
                && $0.space.host == exact.host && $0.space.port == exact.port && $0.space.protocol == exact.protocol
                && sendable.contains($0.space.authenticationMethod)
        }
        let realms = Dictionary(grouping: expired, by: \.space.realm)
        guard realms.count <= 1 else { throw ExpiredAnswer.failure(realms: Array(realms.keys), on: exact, url: request.url) }
        // One realm, perhaps under both password methods: the one a lookup without a method asks first.
        guard let entry = expired.min(by: { sendable.firstIndex(of: $0.space.authenticationMethod)! < sendable.firstIndex(of: $1.space.authenticationMethod)! }) else {
            return nil
        }
        return try storage.defaultCredentialAndSpace(for: entry.space, includingExpired: true)
    }

    /// `user`'s live credential in `space`, else in the first of its compatible spaces that holds
    /// one; only when there is none, the first expired one. With the space it is in.
    private static func credential(of user: String, in space: ProtectionSpace, storage: CredentialStorage) throws
        -> (space: ProtectionSpace, credential: Credential)? {
        let now = Date()
        var expired: (space: ProtectionSpace, credential: Credential)?
        for candidate in space.compatibleSpaces {
            guard let credential = try storage.credentials(for: candidate)[user] else { continue }
            if !credential.isExpired(at: now) { return (candidate, credential) }
            expired = expired ?? (candidate, credential)
        }
        return expired
    }

    /// The first of `space`'s compatible spaces that holds live credentials, with their users
    /// sorted, when none of the spaces has a default; nil otherwise.
    private static func usersWithoutDefault(in space: ProtectionSpace, storage: CredentialStorage) throws
        -> (space: ProtectionSpace, users: [String])? {
        guard try storage.defaultCredential(for: space) == nil else { return nil }
        let now = Date()
        for candidate in space.compatibleSpaces {
            let users = try storage.credentials(for: candidate).values.filter { !$0.isExpired(at: now) }.map(\.user).sorted()
            if !users.isEmpty { return (candidate, users) }
        }
        return nil
    }

    /// The spaces of the same scheme, host and kind (server or proxy) as `space` at another port
    /// that hold `user` (any user when nil) under a method that would answer `space`'s, at most
    /// three: a URL without its port (a scheme with no default port reads as port 0) is the
    /// likeliest reason for a miss.
    private static func otherPorts(of space: ProtectionSpace, user: String?, in storage: CredentialStorage) -> [ProtectionSpace] {
        guard let entries = try? storage.entries() else { return [] }
        // A space stored for Digest does not answer a `get` that names no method, so naming it
        // would send the user to a URL that misses too.
        let methods = Set(space.authenticationMethod.answeringMethods)
        var found: [ProtectionSpace] = []
        for entry in entries where entry.space.host == space.host && entry.space.protocol == space.protocol
            && entry.space.proxyType == space.proxyType && entry.space.port != space.port && (user == nil || entry.user == user)
            && methods.contains(entry.space.authenticationMethod) && !found.contains(entry.space) {
            found.append(entry.space)
            if found.count == 3 { break }
        }
        return found
    }

    /// The library's best match, with its ambiguity message pointing at the flag that resolves it.
    private static func bestMatch(for url: URL, in storage: CredentialStorage) throws -> CredentialMatch? {
        do {
            return try storage.defaultCredential(answering: .request(url))
        } catch let error as CredentialStorageError where error.code == .ambiguousMatch {
            throw CommandFailure(.dataError, "\(error.message) with --realm")
        }
    }
}
