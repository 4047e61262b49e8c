import CredentialStoreCore
package import CredentialStoreCrypto
package import Foundation
internal import GRDB

// The SQLite layer's boundary for blind indexes: a table key is a BLOB, bound and read as bytes.

extension BlindIndex {
    /// An index read from a BLOB column.
    package init(_ data: Data) {
        self.init([UInt8](data))
    }
}

extension Data {
    /// The BLOB a table key is stored as.
    package init(_ index: BlindIndex) {
        self.init(index.bytes)
    }
}

extension RawValue {
    /// A table key bound as a BLOB.
    package static func blob(_ index: BlindIndex) -> RawValue {
        .blob(index.bytes)
    }
}

extension Statement {
    /// Binds `indexes` to the parameters in order, hands each result row to `body`, and resets.
    /// Disfavoured, so that `binding: []` (no parameter) still means the bytes form.
    @_disfavoredOverload
    package func forEachRawRow(binding indexes: [BlindIndex], _ body: (RawRow) throws -> Void) throws {
        try forEachRawRow(values: indexes.map { .blob($0.bytes) }, body)
    }
}

extension RawRow {
    /// A table key read from a BLOB column; nil when the column is not a BLOB.
    package func blindIndex(_ column: Int32) -> BlindIndex? {
        blob(column).map(BlindIndex.init)
    }
}
