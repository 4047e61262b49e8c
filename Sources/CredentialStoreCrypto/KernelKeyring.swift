import CredentialStoreCore
#if os(Linux)
import CLinux
import Glibc
#endif

/// The Linux kernel's key retention service (keyrings(7)), for what unlocks a store for a while:
/// `credstore unlock` keeps it there, with possessor-only permissions and the kernel's own expiry,
/// so that no daemon of credstore's holds it and nothing of it is ever on disk.
///
/// Only the "user" key type and the session and user keyrings are used. A key is built in this
/// process's own keyring, its permissions set to possessor-only before its payload is written
/// (`add_key` creates a key readable by every process of the user), and only then linked where
/// the session finds it; the payload is read into guarded memory.
package enum KernelKeyring {
    /// Which keyring holds a key.
    package enum Keyring: String, CaseIterable, Sendable {
        /// The session keyring: this login session's processes (a shell and what it runs).
        case session
        /// The user keyring: every session of the user.
        case user

        /// KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING.
        var special: Int32 { self == .session ? -3 : -4 }
    }

    // keyctl(2) operations, from <linux/keyctl.h>.
    private static let keyctlGetKeyringID: Int32 = 0
    private static let keyctlUpdate: Int32 = 2
    private static let keyctlSetPerm: Int32 = 5
    private static let keyctlDescribe: Int32 = 6
    private static let keyctlLink: Int32 = 8
    private static let keyctlUnlink: Int32 = 9
    private static let keyctlSearch: Int32 = 10
    private static let keyctlRead: Int32 = 11
    private static let keyctlSetTimeout: Int32 = 15
    private static let keyctlInvalidate: Int32 = 21
    /// KEY_POS_ALL: view, read, write, search, link and setattr for possessors; nothing for anyone else.
    private static let possessorOnly: UInt = 0x3F00_0000
    /// KEY_SPEC_PROCESS_KEYRING: this process's own keyring, made on first use, gone at its exit.
    private static let processKeyring: Int32 = -2

    /// Adds, or replaces, the key `description` in `keyring` with `payload`, readable only by its
    /// possessors, expiring after `timeout` seconds; returns its serial. A key of that name in the
    /// other keyring, which a search could find first, is unlinked from it.
    ///
    /// Nothing changes until the new key is complete: on any failure the key kept before stays,
    /// and what this call made is invalidated.
    ///
    /// - Throws: `unavailable` when this process cannot reach `keyring` (the user keyring under a
    ///   session keyring that does not link it, as `keyctl session` and some services make), or
    ///   the keyring is not there to use; `io` for other refusals of the kernel.
    @discardableResult
    package static func store(_ payload: [UInt8], description: String, in keyring: Keyring, timeout: UInt32) throws -> Int32 {
        #if os(Linux)
        // The keyring's own serial, without creating one: a process without a session keyring
        // (a service, a shell started without pam_keyinit) uses the user's session keyring, where
        // adding to "the session keyring" would make it an anonymous one that dies with it.
        let target = credstore_keyctl(keyctlGetKeyringID, UInt(bitPattern: Int(keyring.special)), 0, 0, 0)
        guard target > 0 else { throw failure("find the \(keyring.rawValue) keyring") }
        let targetID = UInt(truncatingIfNeeded: target)
        // A possessor-only key in a keyring this process does not possess is one no command of
        // this session finds, and none can remove until it expires: refused before anything is made.
        guard keyring == .session || isPossessed(keyring: targetID) else {
            throw CredentialStorageError(.unavailable,
                "this session's processes cannot reach the \(keyring.rawValue) keyring (no session keyring links it, as under `keyctl session` or in some services); the session keyring serves this session")
        }
        // Built in this process's own keyring, which it surely possesses and nothing else sees:
        // a placeholder, restricted, and only then given its payload and timeout.
        let placeholder: [UInt8] = [0]
        let serial = placeholder.withUnsafeBytes { credstore_add_key("user", description, $0.baseAddress, $0.count, processKeyring) }
        guard serial > 0 else { throw failure("add a key to this process's keyring") }
        let id = UInt(truncatingIfNeeded: serial)
        var linked = false
        defer {
            // Made here and not handed over: gone at once, from every keyring that holds it.
            if !linked { _ = credstore_keyctl(keyctlInvalidate, id, 0, 0, 0) }
        }
        guard credstore_keyctl(keyctlSetPerm, id, possessorOnly, 0, 0) == 0 else { throw failure("restrict the key's permissions") }
        guard payload.withUnsafeBytes({ credstore_keyctl(keyctlUpdate, id, UInt(bitPattern: $0.baseAddress), UInt($0.count), 0) }) == 0 else {
            throw failure("write the key")
        }
        guard credstore_keyctl(keyctlSetTimeout, id, UInt(timeout), 0, 0) == 0 else { throw failure("set the key's timeout") }
        // The link displaces a key of the same type and description from the keyring: the key
        // kept before is replaced only now, in one step.
        guard credstore_keyctl(keyctlLink, id, targetID, 0, 0) == 0 else { throw failure("link the key into the \(keyring.rawValue) keyring") }
        linked = true
        for other in Keyring.allCases where other != keyring {
            unlink(description, from: other, except: id)
        }
        // An unlock into the other keyring at the same moment may have unlinked this key as
        // stale (as this one unlinked its key): linked again, so that one of the two stays.
        if !isLinked(id, in: targetID) { _ = credstore_keyctl(keyctlLink, id, targetID, 0, 0) }
        _ = credstore_keyctl(keyctlUnlink, id, UInt(bitPattern: Int(processKeyring)), 0, 0)
        return Int32(truncatingIfNeeded: serial)
        #else
        throw CredentialStorageError(.unavailable, "the kernel keyring is a Linux service")
        #endif
    }

    /// Whether `keyring` exists but this process cannot reach it: the user keyring under a
    /// session keyring that does not link it. False when the kernel keyring cannot be asked
    /// (``store(_:description:in:timeout:)`` then says why).
    package static func isOutOfReach(_ keyring: Keyring) -> Bool {
        #if os(Linux)
        guard keyring != .session else { return false }
        let id = credstore_keyctl(keyctlGetKeyringID, UInt(bitPattern: Int(keyring.special)), 0, 0, 0)
        return id > 0 && !isPossessed(keyring: UInt(truncatingIfNeeded: id))
        #else
        return false
        #endif
    }

    /// The serial of the key `description`, searched for in the session keyring (and what it
    /// links, the user keyring included), then in the user keyring; nil when there is none, or it
    /// has expired or been revoked.
    package static func find(_ description: String) -> Int32? {
        #if os(Linux)
        for keyring in Keyring.allCases {
            let serial = description.withCString { name in
                "user".withCString { type in
                    credstore_keyctl(keyctlSearch, UInt(bitPattern: Int(keyring.special)), UInt(bitPattern: type), UInt(bitPattern: name), 0)
                }
            }
            if serial > 0 { return Int32(truncatingIfNeeded: serial) }
        }
        #endif
        return nil
    }

    /// The payload of key `serial`, in guarded memory; nil when it cannot be read (expired,
    /// revoked, not possessed).
    package static func read(_ serial: Int32, maximumBytes: Int = 256) -> SecureBytes? {
        #if os(Linux)
        var length = 0
        let bytes = try? SecureBytes(count: maximumBytes) { buffer in
            let read = credstore_keyctl(keyctlRead, UInt(truncatingIfNeeded: serial), UInt(bitPattern: buffer.baseAddress), UInt(buffer.count), 0)
            guard read > 0, read <= buffer.count else { throw CredentialStorageError(.notFound, "no key") }
            length = read
        }
        guard let bytes else { return nil }
        return bytes.withUnsafeBytes { try? SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
        #else
        return nil
        #endif
    }

    /// Invalidates key `serial` at once (every keyring that holds it lets go).
    package static func remove(_ serial: Int32) {
        #if os(Linux)
        _ = credstore_keyctl(keyctlInvalidate, UInt(truncatingIfNeeded: serial), 0, 0, 0)
        #endif
    }

    #if os(Linux)
    /// Whether this process possesses keyring `id`: its session keyring links it (keyrings(7):
    /// only what is reachable from the thread, process and session keyrings is possessed).
    private static func isPossessed(keyring id: UInt) -> Bool {
        guard let (type, description) = describe(id), type == "keyring" else { return false }
        let found = description.withCString { name in
            "keyring".withCString { type in
                credstore_keyctl(keyctlSearch, UInt(bitPattern: Int(Keyring.session.special)), UInt(bitPattern: type), UInt(bitPattern: name), 0)
            }
        }
        return found > 0 && UInt(truncatingIfNeeded: found) == id
    }

    /// The serials keyring `id` links directly; empty when it cannot be read.
    private static func members(of id: UInt) -> [UInt] {
        var serials = [Int32](repeating: 0, count: 256)
        let bytes = serials.withUnsafeMutableBytes { credstore_keyctl(keyctlRead, id, UInt(bitPattern: $0.baseAddress), UInt($0.count), 0) }
        guard bytes > 0 else { return [] }
        return serials.prefix(min(bytes, serials.count * 4) / 4).map { UInt(truncatingIfNeeded: $0) }
    }

    /// Whether keyring `keyring` links key `id` directly.
    private static func isLinked(_ id: UInt, in keyring: UInt) -> Bool {
        members(of: keyring).contains(id)
    }

    /// Unlinks every "user" key named `description` from `keyring`, but `kept`.
    private static func unlink(_ description: String, from keyring: Keyring, except kept: UInt) {
        let id = credstore_keyctl(keyctlGetKeyringID, UInt(bitPattern: Int(keyring.special)), 0, 0, 0)
        guard id > 0 else { return }
        let keyringID = UInt(truncatingIfNeeded: id)
        for member in members(of: keyringID) where member != kept {
            guard let found = describe(member), found.type == "user", found.description == description else { continue }
            _ = credstore_keyctl(keyctlUnlink, member, keyringID, 0, 0)
        }
    }

    /// The type and description of key `id` (KEYCTL_DESCRIBE: `type;uid;gid;perm;description`).
    private static func describe(_ id: UInt) -> (type: String, description: String)? {
        var buffer = [UInt8](repeating: 0, count: 512)
        let length = buffer.withUnsafeMutableBytes { credstore_keyctl(keyctlDescribe, id, UInt(bitPattern: $0.baseAddress), UInt($0.count), 0) }
        guard length > 1, length <= buffer.count else { return nil }
        let fields = String(decoding: buffer[0..<(length - 1)], as: UTF8.self).split(separator: ";", maxSplits: 4, omittingEmptySubsequences: false)
        guard fields.count == 5 else { return nil }
        return (String(fields[0]), String(fields[4]))
    }

    private static func failure(_ what: String) -> CredentialStorageError {
        let code = errno
        let reason = String(cString: strerror(code))
        // A kernel built without keys says ENOSYS; a container's seccomp filter (Docker's default)
        // says EPERM: either way the keyring is not there to use, which is not an I/O failure.
        let missing = code == ENOSYS || code == EPERM
        return CredentialStorageError(missing ? .unavailable : .io, "could not \(what) (\(reason)); is the kernel keyring available here (keyctl(2))?")
    }
    #endif
}
