import CredentialStoreCore
import Foundation

/// Builders of `Authorization` and `Proxy-Authorization` header values.
///
/// The core module builds the values only; sending them belongs to the networking layer.
public enum AuthorizationValue {
    /// The Basic credentials value (RFC 7617): `"Basic "` and the base64 of `user:password` in UTF-8.
    ///
    /// Both parts are normalised to NFC first, as the UTF-8 charset of RFC 7617 §2.1 asks, so a
    /// password typed on another system still matches.
    ///
    /// - Throws: `CredentialStorageError.Code.invalidInput` when the user contains `:` (the
    ///   server would split the pair at it) or either part contains a control character, which
    ///   RFC 7617 forbids.
    public static func basic(user: String, password: String) throws -> String {
        guard !user.utf8.contains(UInt8(ascii: ":")) else {
            throw CredentialStorageError(.invalidInput, "a Basic user name cannot contain ':'; the server would read the user as ending there")
        }
        guard !containsControl(user), !containsControl(password) else {
            throw CredentialStorageError(.invalidInput, "a Basic user name or password cannot contain control characters (RFC 7617)")
        }
        let pair = Unicode.nfc(user) + ":" + Unicode.nfc(password)
        return "Basic " + Data(pair.utf8).base64EncodedString()
    }

    private static func containsControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }
}
