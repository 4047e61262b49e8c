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

    /// The folder that holds what this path names, read as the kernel reads a path: by its bytes.
    ///
    /// What every walk up a path must use. NSString's `deletingLastPathComponent` reads
    /// characters, and a slash followed by a combining mark (`/\u{301}`) is one character that is
    /// not a slash: for `/a/b/\u{301}c` it gave `/a`, and a check of every folder above a path
    /// passed over `/a/b`. Trailing and repeated slashes are read as the kernel reads them:
    /// `/a/b/` is in `/a`, `/a` and `/` are in `/`, and a bare name is in the empty path (the
    /// current folder).
    package var parentPath: String {
        let slash = UInt8(ascii: "/")
        var bytes = Array(utf8)
        while bytes.count > 1, bytes.last == slash { bytes.removeLast() }
        guard var end = bytes.lastIndex(of: slash) else { return "" }
        while end > 0, bytes[end - 1] == slash { end -= 1 }
        return end == 0 ? "/" : String(decoding: bytes[..<end], as: UTF8.self)
    }

    /// Whether this path starts at the root: its first byte is a slash. A Character-level
    /// `hasPrefix("/")` reads `/\u{301}x`, which the kernel opens from the root, as relative.
    package var isAbsolutePath: Bool {
        utf8.first == UInt8(ascii: "/")
    }

    /// The elements of this path between its slashes, read by its bytes as ``parentPath`` is;
    /// empty elements (from `//` or a leading or trailing slash) are left out.
    package var pathElements: [String] {
        utf8.split(separator: UInt8(ascii: "/")).map { String(decoding: $0, as: UTF8.self) }
    }
}
