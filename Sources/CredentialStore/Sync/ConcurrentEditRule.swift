import CredentialStoreCore

/// Which replaced local values an import treats as the losers of a concurrent edit
/// (docs/sync-format.md, "Concurrent edits").
///
/// A local value replaced by a newer remote one is the loser of a concurrent edit when this
/// device wrote it and the winner's device cannot have known it: the winner was written by
/// another device, and either that device is not the bundle's signer (relayed by a third device,
/// or a passphrase bundle: this store never records when it merged it), or this store had not
/// merged a bundle signed by that device since it wrote the local value. Under this rule a
/// sequential edit made elsewhere after a `sync` here is not a conflict, and every edit whose
/// winner may not have seen it is, at the cost of an occasional needless report.
struct ConcurrentEditRule {
    /// This store's device id.
    var device: [UInt8]
    /// The device id that signed the bundle (nil for a passphrase bundle).
    var sender: [UInt8]?
    /// When this store last merged a bundle the sender signed (nil: never, or not recorded).
    var lastMergedFromSender: Int64?

    /// Whether `local`, about to be replaced by `remote`, lost a concurrent edit.
    func isConcurrent(local: HybridTimestamp, remote: HybridTimestamp) -> Bool {
        guard local.device == device, remote.device != device else { return false }
        guard let sender, remote.device == sender, let lastMerged = lastMergedFromSender else { return true }
        // The local wall is this device's clock, as the time of the last merge is.
        return local.wall >= lastMerged
    }
}
