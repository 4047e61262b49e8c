import CredentialStoreCore
import CredentialStoreCrypto
import GRDB
internal import GRDBSQLite

/// Column access straight from the SQLite statement, for the lookups on the hot path and the reads
/// that open a store.
///
/// GRDB's `Row` cursors cost more than the B-tree search itself (they build a column-name map and
/// a row object per step), and in a fresh process each typed fetch first instantiates its generic
/// types and looks up their conformances, which scans the binary's conformance tables. Lookups
/// keep GRDB's connection, statement cache and error type but read the few blob, integer and text
/// columns they need directly.
package struct RawRow {
    fileprivate let statement: SQLiteStatement

    package func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(statement, column) == SQLITE_NULL
    }

    package func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(statement, column)
    }

    /// The integer of a column; nil when it is NULL or of another type.
    package func integer(_ column: Int32) -> Int64? {
        sqlite3_column_type(statement, column) == SQLITE_INTEGER ? sqlite3_column_int64(statement, column) : nil
    }

    /// The text of a column; nil when it is NULL or not text.
    package func text(_ column: Int32) -> String? {
        guard sqlite3_column_type(statement, column) == SQLITE_TEXT, let base = sqlite3_column_text(statement, column) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: base, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
    }

    /// The blob of a column; nil when it is NULL or not a blob.
    /// A text column's bytes, valid until the next step; nil for NULL or another type.
    package func textBytes(_ column: Int32) -> UnsafeBufferPointer<UInt8>? {
        guard sqlite3_column_type(statement, column) == SQLITE_TEXT, let base = sqlite3_column_text(statement, column) else { return nil }
        return UnsafeBufferPointer(start: base, count: Int(sqlite3_column_bytes(statement, column)))
    }

    package func blob(_ column: Int32) -> [UInt8]? {
        guard sqlite3_column_type(statement, column) == SQLITE_BLOB else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let base = sqlite3_column_blob(statement, column) else { return [] }
        return [UInt8](UnsafeRawBufferPointer(start: base, count: count))
    }
}

extension Statement {
    /// Binds `values` and runs the statement to completion: the write path's cheaper
    /// `execute(arguments:)`, which matters when an import writes a hundred thousand rows.
    package func executeRaw(_ values: [RawValue]) throws {
        let statement = sqliteStatement
        sqlite3_reset(statement)
        defer { sqlite3_reset(statement) }
        try bind(values)
        var status = sqlite3_step(statement)
        while status == SQLITE_ROW { status = sqlite3_step(statement) }
        guard status == SQLITE_DONE else { throw DatabaseError(resultCode: ResultCode(rawValue: status)) }
    }

    /// Binds `blobs` to the parameters in order, hands each result row to `body`, and resets.
    package func forEachRawRow(binding blobs: [[UInt8]], _ body: (RawRow) throws -> Void) throws {
        try forEachRawRow(values: blobs.map(RawValue.blob), body)
    }

    /// Binds `values` to the parameters in order, hands each result row to `body`, and resets.
    package func forEachRawRow(values: [RawValue], _ body: (RawRow) throws -> Void) throws {
        let statement = sqliteStatement
        sqlite3_reset(statement)
        defer { sqlite3_reset(statement) }
        try bind(values)
        while true {
            let status = sqlite3_step(statement)
            switch status {
            case SQLITE_ROW: try body(RawRow(statement: statement))
            case SQLITE_DONE: return
            default: throw DatabaseError(resultCode: ResultCode(rawValue: status))
            }
        }
    }

    /// Binds `values` to the parameters in order. SQLITE_TRANSIENT: SQLite copies the bytes, so
    /// the values may go away before the step.
    private func bind(_ values: [RawValue]) throws {
        let statement = sqliteStatement
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch value {
            case .blob(let bytes):
                status = bytes.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count), SQLITE_TRANSIENT) }
            case .integer(let integer):
                status = sqlite3_bind_int64(statement, index, integer)
            case .text(let text):
                status = sqlite3_bind_text(statement, index, text, -1, SQLITE_TRANSIENT)
            case .null:
                status = sqlite3_bind_null(statement, index)
            }
            guard status == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: status)) }
        }
    }
}

/// SQLite's "copy the bytes now" destructor, which the C macro spells as a cast of -1.
private let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
