public import CredentialStore
public import Foundation

/// Milliseconds since 1970, as the sync clock reads them.
public func nowMillis() -> Int64 {
    CredentialStorage.syncClockNow()
}

extension CredentialStorage {
    /// Writes a bundle signed by this store's device, for the devices `recipients`, holding exactly `items` and `defaults`,
    /// to `url`: the bundles an export never writes (old or future stamps, invalid fields, more
    /// items at once than a test could `set`).
    package func writeBundle(
        _ items: [SignedBundleItem], defaults: [SignedBundleDefault] = [], created: Int64 = nowMillis(),
        for recipients: [DeviceKey], itemLimit: Int? = nil, to url: URL
    ) throws {
        try writeSignedBundle(items: items, defaults: defaults, created: created, recipients: recipients, itemLimit: itemLimit, to: url)
    }
}

/// The store an import is killed in, and the large bundle that import reads: `oldCount`
/// synchronizable credentials (and 10 permanent ones the import must leave alone) in the store;
/// in the bundle a new password for each old one and `newCount` new ones, stamped a second ahead.
public enum LargeImport {
    public static let oldCount = 40
    public static let newCount = 20_000
    public static let permanentCount = 10
    /// Synchronizable credentials once the import is whole.
    public static let total = oldCount + newCount

    /// The space of the `index`th item: 250 hosts, 3 realms.
    public static func space(_ index: Int) -> ProtectionSpace {
        ProtectionSpace(host: "crash-\(index % 250).example.com", port: 443, protocol: "https", realm: "R\(index % 3)")
    }

    /// Fills `store` with the old state, trusting `sender`.
    public static func prepare(_ store: CredentialStorage, trusting sender: CredentialStorage) throws {
        try store.sync.trust(try sender.sync.deviceKey)
        for index in 0..<oldCount {
            try store.set(Credential(user: "old-user-\(index)", password: "old-\(index)", persistence: .synchronizable), for: space(index))
        }
        for index in 0..<permanentCount {
            try store.set(Credential(user: "kept-\(index)", password: "kept-\(index)", persistence: .permanent), for: space(index))
        }
    }

    /// Writes the bundle, signed by `sender`, for the device `recipient`, to `url`.
    public static func writeBundle(from sender: CredentialStorage, for recipient: DeviceKey, to url: URL) throws {
        let now = nowMillis()
        var items: [SignedBundleItem] = []
        items.reserveCapacity(total)
        for index in 0..<oldCount {
            items.append(SignedBundleItem(space: space(index), user: "old-user-\(index)", password: "new-\(index)", wall: now + 1000, counter: Int64(index)))
        }
        for index in 0..<newCount {
            items.append(SignedBundleItem(space: space(index), user: "new-user-\(index)", password: "pw-\(index)", wall: now + 1000, counter: Int64(index)))
        }
        try sender.writeBundle(items, created: now, for: [recipient], to: url)
    }
}
