import CredentialStore
import Foundation

/// Words of a command the messages advise, spelled so that a shell reads each one back as itself
/// when the user pastes the command.
package enum ShellWords {
    /// `words`, each one ``quoted(_:)``, joined by spaces.
    package static func joined(_ words: [String]) -> String {
        words.map(quoted).joined(separator: " ")
    }

    /// `word` as is when the shell reads it back unchanged, else in single quotes; a word with a
    /// control or bidirectional character in ANSI-C quotes (`$'Staff\tArea'`), which spell each
    /// such character as an escape bash reads back as the character, so that the word stays
    /// readable on a terminal (no character of it drives the display) and pastes as itself.
    package static func quoted(_ word: String) -> String {
        if word.unicodeScalars.contains(where: FieldRules.isDisplayControl) {
            var quoted = "$'"
            for scalar in word.unicodeScalars {
                switch scalar {
                case "\\": quoted += "\\\\"
                case "'": quoted += "\\'"
                case "\t": quoted += "\\t"
                case _ where FieldRules.isDisplayControl(scalar):
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    // Always the full width: bash reads up to 2 digits after \x and 4 after \u;
                    // \x only for ASCII, as it makes a byte, where \u makes the character's UTF-8.
                    quoted += scalar.value <= 0x7F ? "\\x" + String(repeating: "0", count: 2 - hex.count) + hex
                        : scalar.value <= 0xFFFF ? "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                        : "\\U" + String(repeating: "0", count: 8 - hex.count) + hex
                default: quoted.unicodeScalars.append(scalar)
                }
            }
            return quoted + "'"
        }
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_.:/@%+=,".unicodeScalars.contains(scalar))
        }
        return plain ? word : "'" + word.replacingEvery("'", with: "'\\''") + "'"
    }
}
