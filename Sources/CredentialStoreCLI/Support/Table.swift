/// Columns aligned with two spaces between them, no trailing blanks.
package struct Table {
    package var header: [String]
    package var rows: [[String]] = []

    package init(header: [String]) {
        self.header = header
    }

    package var rendered: String {
        var widths = Widths(header: header)
        for row in rows { widths.measure(row) }
        return ([header] + rows).map { widths.line($0) }.joined()
    }

    /// The columns' widths, measured row by row: for a table too long to hold, whose rows are
    /// measured in one pass and written in another.
    package struct Widths {
        private var widths: [Int]

        /// The widths of `header` alone.
        package init(header: [String]) {
            widths = [Int](repeating: 0, count: header.count)
            measure(header)
        }

        /// Widens the columns to fit `row`.
        package mutating func measure(_ row: [String]) {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], Describe.cell(cell).count) }
        }

        /// `row` as a line of the table, its cells escaped and padded to the widths measured.
        package func line(_ row: [String]) -> String {
            var line = ""
            for (column, text) in row.enumerated() {
                let cell = Describe.cell(text)
                line += cell
                if column < row.count - 1 { line += String(repeating: " ", count: max(widths[column] - cell.count, 0) + 2) }
            }
            while line.hasSuffix(" ") { line.removeLast() }
            return line + "\n"
        }
    }
}
