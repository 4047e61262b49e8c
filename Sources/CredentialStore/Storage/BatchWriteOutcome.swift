/// What a batch write did, or would do in a dry run, with one of its credentials.
package enum BatchWriteOutcome: Sendable, Hashable {
    /// The space had no credential for the user; it has one now.
    case added
    /// The space held another password for the user, replaced because the batch allowed it.
    case updated
    /// The space already held the same user and password; nothing was written for it.
    case unchanged
    /// The space holds another password for the user, left as it is: the batch does not replace.
    case keptDifferent
}
