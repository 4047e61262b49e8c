extension String {
    /// `self` with every `scalar` replaced by `replacement`, compared scalar by scalar.
    ///
    /// What every escaping must use. Foundation's `replacingOccurrences(of:with:)` compares
    /// characters, and a quote followed by a combining mark (`'\u{301}`) is one character that is
    /// not a quote: it stays unescaped, and the shell, curl or a CSV reader, which read bytes,
    /// then see a closing quote.
    package func replacingEvery(_ scalar: Unicode.Scalar, with replacement: String) -> String {
        var result = String.UnicodeScalarView()
        for element in unicodeScalars {
            if element == scalar {
                result.append(contentsOf: replacement.unicodeScalars)
            } else {
                result.append(element)
            }
        }
        return String(result)
    }
}
