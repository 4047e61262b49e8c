/// Where a parser reads its Unicode scalars from, one at a time: a file read in chunks
/// (``ScalarStream``) or a string in memory (``StringScalars``).
///
/// Parsers work on scalars, never on Characters: Swift fuses "\r\n" into one Character, which
/// would hide every line ending from a comparison.
package protocol ScalarSource {
    /// The next scalar; nil at the end of the input.
    ///
    /// - Throws: ``FormatError`` when the bytes are not UTF-8, ``ReadError`` when the input
    ///   cannot be read.
    mutating func nextScalar() throws -> Unicode.Scalar?
}

/// The scalars of a string already in memory.
package struct StringScalars: ScalarSource {
    private var iterator: String.UnicodeScalarView.Iterator

    package init(_ text: String) {
        iterator = text.unicodeScalars.makeIterator()
    }

    package mutating func nextScalar() -> Unicode.Scalar? {
        iterator.next()
    }
}
