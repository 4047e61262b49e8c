/// What hears of the sealed rows a write transaction changes, one row at a time, as the SQL runs:
/// a replaced row is reported removed (as it was) and added (as it is now). Every write takes one;
/// the persistence layer keeps no record of them itself.
package protocol RowChangeObserver: AnyObject {
    func rowRemoved(_ row: SealedRowFingerprint)
    func rowAdded(_ row: SealedRowFingerprint)
    /// Key slots were deleted or replaced (they are outside the sealed rows, but wrap the root key).
    func keySlotsRemoved()
    /// Asked before the transaction commits; throwing rolls it back.
    func willCommit() throws
    /// Asked once the transaction has committed: whether the write-ahead log must be emptied now,
    /// because its earlier frames hold bytes the transaction deleted.
    var emptiesLog: Bool { get }
}
