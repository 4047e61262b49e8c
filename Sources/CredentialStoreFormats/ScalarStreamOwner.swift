/// What owns the descriptor a ``ScalarStream`` reads: kept alive while it reads, and shown each
/// chunk, so that it can tell whether two reads of a file saw the same bytes.
package protocol ScalarStreamOwner: AnyObject {
    func didRead(_ chunk: UnsafeRawBufferPointer)
}
