import Foundation

extension Unicode {
    /// NFC, so that text Swift calls equal (composed "é" and decomposed "é") is also byte-equal,
    /// and the blind indexes agree with `==` and hashing.
    package static func nfc(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 >= 0x80 }) else { return text }
        return text.precomposedStringWithCanonicalMapping
    }
}
