package import CredentialStoreCore

extension StoreProtection {
    /// The kind's name in the key_slots table and in each slot's associated data and commitment.
    /// Stores on disk spell a key file `keyfile`, unlike the public raw value, and the wrapped key
    /// is bound to that spelling: it can never change.
    package var slotName: String {
        switch self {
        case .keyFile: "keyfile"
        case .passphrase: "passphrase"
        }
    }

    /// The kind a slot row names; nil for a name no build writes.
    package init?(slotName: String) {
        switch slotName {
        case "keyfile": self = .keyFile
        case "passphrase": self = .passphrase
        default: return nil
        }
    }
}
