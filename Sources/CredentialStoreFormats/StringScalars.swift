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
