import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import CredentialStore
import CredentialStoreCore
import CredentialStoreCrypto
import CredentialStorePersistence
import CredentialStoreChallenges
import CredentialStoreTestSupport

/// Whether this process runs under AddressSanitizer or ThreadSanitizer, whose mlock interceptors
/// do nothing (sanitizer_common's), so locked pages cannot be observed there.
let runsUnderSanitizer = [String](["__asan_init", "__tsan_init"]).contains { dlsym(dlopen(nil, RTLD_NOW), $0) != nil }

/// Key material lives on locked pages (never swapped out), as the kernel itself reports them.
@Suite(.enabled(if: !runsUnderSanitizer, "the sanitizers turn mlock into a no-op"))
struct MemoryHygieneTests {
    /// The `VmFlags` of the mapping of this process that holds `address`, from /proc/self/smaps.
    private func flags(ofMappingHolding address: UInt) throws -> [Substring]? {
        // Read to the end by hand: proc files report size 0, and a whole-file read may stop short.
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/self/smaps"))
        let smaps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        var inside = false
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let range = fields.first, range.contains("-"), !range.hasSuffix(":") {
                let bounds = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
                inside = bounds.count == 2 && bounds[0] <= address && address < bounds[1]
            } else if inside, fields.first == "VmFlags:" {
                return Array(fields.dropFirst())
            }
        }
        return nil
    }

    @Test func keyBuffersAreOnLockedPages() throws {
        let key = try SecureBytes.random(count: 32)
        let address = key.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        let flags = try #require(try flags(ofMappingHolding: address), "no mapping holds the key buffer")
        #expect(flags.contains("lo"), "VmFlags \(flags.joined(separator: " ")) lack lo (mlock); RLIMIT_MEMLOCK may be too low")
        // And read-only once filled: an accidental write faults instead of changing a key.
        #expect(flags.contains("rd") && !flags.contains("wr"))
    }

    @Test func anOpenStoresKeysAreOnLockedPages() throws {
        let store = try TemporaryStore()
        let storage = try store.open()
        let address = storage.keyHolder.kek.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        let flags = try #require(try flags(ofMappingHolding: address))
        #expect(flags.contains("lo"))
    }
}
