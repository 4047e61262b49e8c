import CredentialStoreCore
#if os(Linux)
import CLinux
import Glibc
#endif

/// The Linux kernel's key retention service (keyrings(7)), for what unlocks a store for a while:
/// `credstore unlock` keeps it there, with possessor-only permissions and the kernel's own expiry,
/// so that no daemon of credstore's holds it and nothing of it is ever on disk.
///
/// Only the "user" key type and the session and user keyrings are used. A key's permissions are
/// set to possessor-only before its payload is written (`add_key` creates a key readable by every
/// process of the user), and the payload is read into guarded memory.
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
    private static let keyctlSearch: Int32 = 10
    private static let keyctlRead: Int32 = 11
    private static let keyctlSetTimeout: Int32 = 15
    private static let keyctlInvalidate: Int32 = 21
    /// KEY_POS_ALL: view, read, write, search, link and setattr for possessors; nothing for anyone else.
    private static let possessorOnly: UInt = 0x3F00_0000

    /// Adds, or replaces, the key `description` in `keyring` with `payload`, readable only by its
    /// possessors, expiring after `timeout` seconds; returns its serial.
    @discardableResult
    package static func store(_ payload: [UInt8], description: String, in keyring: Keyring, timeout: UInt32) throws -> Int32 {
        #if os(Linux)
        // A new key is readable by all of the user's processes until its permissions change: it is
        // created with a placeholder, restricted, and only then given its payload.
        // The keyring's own serial, without creating one: a process without a session keyring
        // (a service, a shell started without pam_keyinit) uses the user's session keyring, where
        // adding to "the session keyring" would make it an anonymous one that dies with it.
        let target = credstore_keyctl(keyctlGetKeyringID, UInt(bitPattern: Int(keyring.special)), 0, 0, 0)
        guard target > 0 else { throw failure("find the \(keyring.rawValue) keyring") }
        let placeholder: [UInt8] = [0]
        let serial = placeholder.withUnsafeBytes { credstore_add_key("user", description, $0.baseAddress, $0.count, Int32(truncatingIfNeeded: target)) }
        guard serial > 0 else { throw failure("add a key to the \(keyring.rawValue) keyring") }
        let id = UInt(truncatingIfNeeded: serial)
        guard credstore_keyctl(keyctlSetPerm, id, possessorOnly, 0, 0) == 0 else { throw failure("restrict the key's permissions") }
        guard payload.withUnsafeBytes({ credstore_keyctl(keyctlUpdate, id, UInt(bitPattern: $0.baseAddress), UInt($0.count), 0) }) == 0 else {
            throw failure("write the key")
        }
        guard credstore_keyctl(keyctlSetTimeout, id, UInt(timeout), 0, 0) == 0 else { throw failure("set the key's timeout") }
        return Int32(truncatingIfNeeded: serial)
        #else
        throw CredentialStorageError(.unavailable, "the kernel keyring is a Linux service")
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
