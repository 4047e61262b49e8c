import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ProtectionSpace {
    /// The host as identity compares it: brackets off an IPv6 literal, one trailing dot dropped,
    /// ASCII lowercased, an IPv6 address in its one canonical (RFC 5952) spelling, and Unicode in
    /// NFC. Applying it to its own result changes nothing, so a space rebuilt from its stored
    /// fields is the same space.
    package static func canonicalHost(_ host: String) -> String {
        var text = Substring(host)
        if text.hasPrefix("["), text.hasSuffix("]"), text.count >= 2 {
            let inner = text.dropFirst().dropLast()
            // "[[::1]]" is not a bracketed address; leave it for validation to refuse.
            if !inner.utf8.contains(UInt8(ascii: "[")), !inner.utf8.contains(UInt8(ascii: "]")) { text = inner }
        }
        // One trailing dot is the DNS root; a second would leave a host that a rebuild shortens again.
        if text.hasSuffix("."), !text.dropLast().hasSuffix(".") { text = text.dropLast() }
        // Byte searches: `contains` with a string argument is Foundation's, which goes through
        // CFString, and every space built or decoded comes through here.
        if text.utf8.contains(UInt8(ascii: ":")), let address = canonicalIPv6(String(text)) { return address }
        return Unicode.nfc(ProtocolToken.asciiLowercased(String(text)))
    }

    /// "0:0::1" and "::1" are one address; inet_ntop writes the RFC 5952 form. A zone ("%eth0")
    /// is kept as given: interface names are case-sensitive.
    private static func canonicalIPv6(_ text: String) -> String? {
        let parts = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        var address = in6_addr()
        guard inet_pton(AF_INET6, String(parts[0]), &address) == 1 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        let canonical = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return parts.count == 2 ? canonical + "%" + parts[1] : canonical
    }
}
