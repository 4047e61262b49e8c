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
